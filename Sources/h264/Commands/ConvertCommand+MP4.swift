import ArgumentParser
import Foundation
import H264
import MediaContainers
import MediaCore

/// `h264 convert` to and from MP4 (MediaContainers' `MP4Writer`, `FragmentedMP4FileWriter`,
/// `MP4Reader`).
extension ConvertCommand {
    /// True when `path` names an MP4 file by its extension.
    static func isMP4Name(_ path: String) -> Bool { Target(extensionOf: path) == .mp4 }

    /// Annex-B (H.264 or H.265) or FLV (video and audio) → MP4, progressive (the index at the
    /// front) or with `--fragmented` one fragment per GOP. G.711 audio, which MP4 players do not
    /// take, is left out with a line saying so.
    func convertToMP4(_ bytes: [UInt8], name: String) throws {
        if let fps, !(fps.isFinite && fps > 0) { throw CLIError("--fps \(fps) must be a positive number") }
        let (frames, diagnostics) = try CLIError.named(name) { () throws(MediaError) in
            if FLVConversion.isFLV(bytes) { return try Self.frames(ofFLV: bytes) }
            return (try MP4Conversion.frames(fromAnnexB: bytes, frameRate: fps.map { FrameRate(approximating: $0) }), [])
        }
        try CLIIO.report(diagnostics, file: name, command: "convert", strict: strict.strict)
        guard frames.contains(where: { $0.videoFormat != nil }) else { throw CLIError("\(name): no picture to write") }
        var kept = frames
        if let left = frames.lazy.compactMap(\.audioFormat).first(where: { $0.codec == .pcmu || $0.codec == .pcma }) {
            FileHandle.standardError.write(Data("h264 convert: the \(left.codec.rawValue) audio track is left out: MP4 players do not take G.711\n".utf8))
            kept = frames.filter { $0.audioFormat.map { $0.codec != .pcmu && $0.codec != .pcma } ?? true }
        }
        try CLIError.named(out.output) { () throws(MediaError) in
            if fragmented {
                var formats: [MediaFormatDescription] = []
                for frame in kept where !formats.contains(where: { Self.sameTrack($0, frame.format) }) { formats.append(frame.format) }
                let writer = try FragmentedMP4FileWriter(path: out.output, formats: formats)
                for frame in kept { try writer.append(frame) }
                try writer.finish()
            } else {
                let writer = try MP4Writer(path: out.output)
                for frame in kept { try writer.append(frame) }
                try writer.finish()
            }
        }
    }

    /// MP4 → Annex-B: the first video track's samples with their parameter sets before each
    /// keyframe, as FFmpeg's `h264_mp4toannexb` gives them.
    func convertFromMP4(_ bytes: [UInt8], name: String) throws {
        let (annexB, diagnostics) = try CLIError.named(name) { () throws(MediaError) in
            try MP4Reader.annexB(fromMP4: MP4MemorySource(bytes))
        }
        try CLIIO.report(diagnostics, file: name, command: "convert", strict: strict.strict)
        try CLIIO.write(annexB, to: out.output)
    }

    /// The frames of an FLV file, both tracks, in file order, with the skipped tags and warnings.
    static func frames(ofFLV bytes: [UInt8]) throws(MediaError) -> ([CompressedFrame], [MediaError]) {
        let contents = try FLVReader.read(bytes)
        return (contents.frames.map(\.frame), contents.skippedTags + contents.warnings)
    }

    /// True when `a` and `b` are formats of one track (both video, or both audio).
    static func sameTrack(_ a: MediaFormatDescription, _ b: MediaFormatDescription) -> Bool {
        (a.video != nil) == (b.video != nil)
    }
}
