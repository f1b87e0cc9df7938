import ArgumentParser
import Foundation
import H264
import H264Decoder
import H264Media
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `h264 decode INPUT -o OUTPUT`: H.264 (Annex-B, or AVCC with `--config`) to y4m, raw planes or
/// FFmpeg's framemd5 listing.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode H.264 (Annex-B .h264, or AVCC with --config) to y4m, raw YUV or a framemd5 listing.",
        discussion: """
        INPUT is an Annex-B byte stream (- for standard input), read in chunks as a network stream would \
        arrive, or AVCC (length-prefixed NAL units) with --config FILE.avcC. Decoding starts at the first IDR \
        picture. --format y4m (default) writes a yuv4mpegpipe stream (ffplay, x264 and 'h264 encode' read it); \
        raw writes the planes back to back in the stream's own pixel format, as 'ffmpeg -i INPUT -f rawvideo -' \
        does (yuv420p, yuv422p10le, gbrp for RGB 4:4:4 …); y4m cannot hold planar RGB (gbrp …). --framemd5 writes what 'ffmpeg -i INPUT -f framemd5 -' writes \
        instead of the pictures. Frames are timed from the SPS's frame rate (25 fps without one).
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case y4m, raw }

    @Argument(help: "The stream to decode ('-' for standard input).")
    var input: String
    @Option(name: .shortAndLong, help: "Output file (- for standard output).")
    var output: String = "-"
    @Option(help: "Output format: y4m (default) or raw.")
    var format: Format = .y4m
    @Flag(help: "Write FFmpeg's framemd5 listing (one MD5 per frame) instead of the pictures.")
    var framemd5 = false
    @Option(help: "An avcC file: INPUT is AVCC with its length size and parameter sets.")
    var config: String?
    @Option(help: "Decoding threads (0 = automatic, the default).")
    var threads: Int = 0
    @Flag(help: "Real-time decoding: no frame threading, each frame out as soon as it is decoded.")
    var realTime = false
    @Option(help: "Output pixel format: native (default: what the stream codes), i420, nv12 or bgra (8-bit, libyuv; nv12 and bgra with --format raw).")
    var pixelFormat: PixelFormat = .native

    /// `DecoderConfiguration.OutputPixelFormat` as an option value.
    enum PixelFormat: String, ExpressibleByArgument, CaseIterable {
        case native, i420, nv12, bgra
        var output: DecoderConfiguration.OutputPixelFormat { DecoderConfiguration.OutputPixelFormat(rawValue: rawValue) ?? .native }
    }
    @Flag(help: "No progress and no summary.")
    var quiet = false

    func validate() throws {
        guard (0...64).contains(threads) else { throw ValidationError("--threads must be 0…64") }
        if format == .y4m && !framemd5 && (pixelFormat == .nv12 || pixelFormat == .bgra) {
            throw ValidationError("y4m cannot hold \(pixelFormat.rawValue) (\(pixelFormat == .nv12 ? "interleaved chroma" : "packed RGB")): use --format raw")
        }
    }

    func run() throws {
        try runReportingErrors(command: "decode") { try decode() }
    }

    /// What the output handler shares with the reading thread.
    private struct Progress {
        var frames = 0
        var damaged = 0
        var error: String?
        var y4m = Y4MFrameWriter(hint: "use --format raw")
    }

    private func decode() throws {
        let name = input == "-" ? "<stdin>" : input
        let out = try CLIIO.openOutput(output)
        let descriptor = out.fileDescriptor
        let outputName = output
        let state = Locked(Progress())
        let asFramemd5 = framemd5
        let asY4M = format == .y4m
        let configuration = DecoderConfiguration(threads: threads == 0 ? .automatic : .count(threads), realTime: realTime,
                                                 outputPixelFormat: pixelFormat.output)
        let session = try DecoderSession(configuration: configuration) { frame in
            state.withLock { s in
                guard s.error == nil else { return }
                do {
                    if asFramemd5 {
                        if s.frames == 0 {
                            let header = FrameMD5.header(width: frame.width, height: frame.height, sampleAspectRatio: frame.sampleAspectRatio,
                                                         rate: FrameRate(frameDuration: frame.duration))
                            try writeAll(descriptor, Array(header.utf8), name: outputName)
                        }
                        let line = FrameMD5.line(index: s.frames, byteCount: frame.packedByteCount, md5: frame.md5())
                        try writeAll(descriptor, Array(line.utf8), name: outputName)
                    } else if asY4M {
                        try writeAll(descriptor, s.y4m.bytes(of: frame, index: s.frames, rate: FrameRate(frameDuration: frame.duration)), name: outputName)
                    } else {
                        try writeAll(descriptor, frame.packedBytes(), name: outputName)
                    }
                } catch {
                    s.error = "\(error)"
                    return
                }
                s.frames += 1
                if frame.flags.contains(.damaged) { s.damaged += 1 }
            }
        }

        var stream: (any ByteSource)
        if let config {
            let record = try CLIIO.readConfiguration(config)
            let avcc = try CLIIO.read(input)
            do throws(H264Error) {
                stream = BufferSource(bytes: try AnnexB.fromAVCCStream(avcc, lengthSize: record.nalUnitLengthSize, parameterSets: record))
            } catch {
                throw CLIError(file: name, error)
            }
        } else if input == "-" {
            stream = FileSource(handle: .standardInput, name: name)
        } else {
            guard let handle = FileHandle(forReadingAtPath: input) else { throw CLIError("\(input): no such file") }
            stream = FileSource(handle: handle, name: name)
        }

        let progress = !quiet && isatty(2) != 0
        let clock = ContinuousClock()
        let started = clock.now
        var decoder = AnnexBDecoder(session: session)
        try decodeAnnexB(from: &stream, into: &decoder, session: session, name: name, showProgress: progress,
                         framesDone: { state.withLock { $0.frames } }, failure: { state.withLock { $0.error } })
        let index = decoder.accessUnitCount
        let skipped = decoder.skippedAccessUnitCount
        session.invalidate()
        if out !== FileHandle.standardOutput { try out.close() }
        let s = state.withLock { (frames: $0.frames, damaged: $0.damaged, error: $0.error) }
        if let error = s.error { throw CLIError(error) }
        guard index > 0 else { throw CLIError("\(name): no decodable picture (no IDR with its SPS and PPS)") }
        if !quiet {
            let elapsed = (clock.now - started) / .seconds(1)
            var line = "\(progress ? "\r" : "")decoded \(s.frames) frames in \(EncodeCommand.format(elapsed)) s "
                + "(\(EncodeCommand.format(Double(s.frames) / max(elapsed, 0.001))) fps) → \(output)"
            if s.damaged > 0 { line += ", \(s.damaged) damaged" }
            if skipped > 0 { line += ", \(skipped) access units skipped before a usable IDR" }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }
}
