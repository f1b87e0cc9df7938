import ArgumentParser
import Foundation
import H264
import MediaContainers
import MediaCore
#if canImport(Glibc)
import Glibc
#endif

/// `h264 convert` of a file FLV → MP4 and MP4 → Annex-B without holding the file, its frames or
/// the output in memory (a fresh buffer the size of the file costs more CPU in page faults than
/// the conversion): the output and messages of ``convertToMP4(_:name:)``/``convertFromMP4(_:name:)``.
extension ConvertCommand {
    /// Converts `input` as it is read when it is a file of FLV to a progressive MP4, or MP4 to
    /// Annex-B without `--strict` (where a warning leaves nothing written); else false.
    func convertStreaming(to target: Target, name: String) throws -> Bool {
        guard input != "-", (target == .mp4 && !fragmented) || (target == .annexb && !strict.strict) else { return false }
        let descriptor = open(input, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var stats = stat(), head = [UInt8](repeating: 0, count: 8)
        guard fstat(descriptor, &stats) == 0, stats.st_mode & S_IFMT == S_IFREG,
              pread(descriptor, &head, 8, 0) == 8 else { return false }
        if target == .mp4 && FLVConversion.isFLV(head) {
            try convertFLVToMP4(descriptor, name: name)
            return true
        }
        if target == .annexb && MP4Reader.isMP4(head) {
            try convertMP4ToAnnexB(name: name)
            return true
        }
        return false
    }

    /// FLV → progressive MP4 as ``convertToMP4(_:name:)``: each frame to `MP4Writer` as it comes.
    private func convertFLVToMP4(_ descriptor: Int32, name: String) throws {
        var writer: MP4Writer?
        try streamFLV(descriptor, name: name) { frame throws(MediaError) in
            if writer == nil { writer = try MP4Writer(path: out.output) }
            try writer?.append(frame)
        }
        try CLIError.named(out.output) { () throws(MediaError) in try writer?.finish() }
    }

    /// Reads the FLV file open at `descriptor` in 1 MiB pieces and hands each frame to `write` as
    /// it comes (G.711 audio, which MP4 and HLS players do not take, left out with a line saying
    /// so); the skipped tags and warnings are reported at the end, then the check for a picture,
    /// then the first error `write` threw (named for the output), which stopped the writing.
    func streamFLV(_ descriptor: Int32, name: String, into write: (CompressedFrame) throws(MediaError) -> Void) throws {
        if let fps, !(fps.isFinite && fps > 0) { throw CLIError("--fps \(fps) must be a positive number") }
        var reader = FLVReader()
        var skipped: [MediaError] = [], warnings: [MediaError] = []
        var writerError: MediaError?, leftOut: AudioFormatDescription?
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var hasPicture = false, ended = false
        while !ended {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw CLIError("\(input): cannot read: \(String(cString: strerror(errno)))") }
            if count == 0 {
                reader.finish()
                ended = true
            } else {
                reader.append(buffer[..<count])
            }
            while let event = try CLIError.named(name, { () throws(MediaError) in try reader.next() }) {
                switch event {
                case .skippedTag(let error): skipped.append(error)
                case .warning(let warning): warnings.append(warning)
                case .formatChanged, .endOfSequence: break
                case .frame(let tag):
                    let frame = tag.frame
                    if frame.videoFormat != nil { hasPicture = true }
                    if let audio = frame.audioFormat, audio.codec == .pcmu || audio.codec == .pcma {
                        leftOut = leftOut ?? audio
                        continue
                    }
                    guard writerError == nil else { continue }
                    do throws(MediaError) { try write(frame) } catch { writerError = error }
                }
            }
        }
        try CLIIO.report(skipped + warnings, file: name, command: "convert", strict: strict.strict)
        guard hasPicture else { throw CLIError("\(name): no picture to write") }
        if let leftOut {
            FileHandle.standardError.write(Data("h264 convert: the \(leftOut.codec.rawValue) audio track is left out: MP4 players do not take G.711\n".utf8))
        }
        try CLIError.named(out.output) { () throws(MediaError) in
            if let writerError { throw writerError }
        }
    }

    /// MP4 → Annex-B, as ``convertFromMP4(_:name:)`` (`MP4Reader.annexB(fromMP4:)`, frame by
    /// frame through `MP4AnnexBSource`): the file read sample by sample (`MP4FileSource`), the Annex-B written in 1 MiB
    /// pieces as it is made; the reader's warnings after it.
    private func convertMP4ToAnnexB(name: String) throws {
        var output = StreamingOutput(path: out.output)
        let diagnostics = try CLIError.named(name) { () throws(MediaError) -> [MediaError] in
            let reader = try MP4Reader(source: try MP4FileSource(path: input))
            guard let video = reader.tracks.first(where: { $0.format?.video != nil }) else {
                return reader.warnings + [MediaError(.missingParameterSet, field: "stsd", "no H.264 or H.265 track in the file")]
            }
            var units = MP4AnnexBSource(reader: reader, track: video)
            while let unit = try units.nextAccessUnit() { output.append(unit.annexB) }
            return units.takeWarnings()
        }
        try CLIIO.report(diagnostics, file: name, command: "convert", strict: strict.strict)
        try output.finish()
    }
}

/// Bytes to a file (created at the first write, or at the end) or standard output (`-`), through
/// a 1 MiB buffer; a failed write stops the writing and is thrown by ``finish()``.
private struct StreamingOutput {
    let path: String
    private var descriptor: Int32 = -1
    private var buffer: [UInt8] = []
    private var failure: String?

    init(path: String) {
        self.path = path
        buffer.reserveCapacity(1 << 20)
    }

    mutating func append(_ bytes: [UInt8]) {
        guard failure == nil else { return }
        buffer += bytes
        if buffer.count >= 1 << 20 { flush() }
    }

    /// Writes what is left and closes the file; a `CLIError` naming it when it cannot be written.
    mutating func finish() throws {
        flush()
        if descriptor > 2 { close(descriptor) }
        descriptor = -1
        if let failure { throw CLIError("\(path): cannot write: \(failure)") }
    }

    private mutating func flush() {
        guard failure == nil else { return }
        if descriptor < 0 {
            descriptor = path == "-" ? STDOUT_FILENO : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else { return failure = String(cString: strerror(errno)) }
        }
        var done = 0
        while done < buffer.count {
            let written = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + done, $0.count - done) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return failure = String(cString: strerror(errno)) }
            done += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
