import ArgumentParser
import Foundation
import H264
import H264Decoder
import MediaContainers

/// `h264 decode INPUT -o OUTPUT`: H.264 or H.265 (Annex-B, or AVCC/HVCC with `--config`) to y4m,
/// raw planes or FFmpeg's framemd5 listing.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode H.264 or H.265 to y4m, raw YUV or a framemd5 listing.",
        discussion: """
        INPUT: Annex-B ('-': standard input), MP4 or MOV (its video), or length-prefixed NAL units with --config \
        FILE.avcC or FILE.hvcC; decoding starts at the first IDR (H.265: IRAP). --format y4m (default) or raw \
        (as ffmpeg -f rawvideo); --framemd5 writes what ffmpeg -f framemd5 writes.
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case y4m, raw }

    /// `DecoderConfiguration.OutputPixelFormat` as an option value.
    enum PixelFormat: String, ExpressibleByArgument, CaseIterable {
        case native, i420, nv12, bgra
        var output: DecoderConfiguration.OutputPixelFormat { DecoderConfiguration.OutputPixelFormat(rawValue: rawValue) ?? .native }
    }

    @Argument(help: "The stream to decode ('-' for standard input).") var input: String
    @Option(name: .shortAndLong, help: "Output file (- for standard output).") var output: String = "-"
    @Option(help: "Output format: y4m (default) or raw.") var format: Format = .y4m
    @Flag(help: "Write FFmpeg's framemd5 listing (one MD5 per frame) instead of the pictures.") var framemd5 = false
    @Option(help: "An avcC or hvcC file: INPUT is AVCC/HVCC with its length size and parameter sets.") var config: String?
    @Option(help: "Decoding threads (0 = automatic, the default).") var threads: Int = 0
    @Flag(help: "Real-time decoding: no frame threading, each frame out as soon as it is decoded.") var realTime = false
    @Option(help: "Output pixel format: native (default: what the stream codes), i420, nv12 or bgra (8-bit, libyuv; nv12 and bgra with --format raw).")
    var pixelFormat: PixelFormat = .native
    @OptionGroup var quiet: QuietFlag

    func validate() throws {
        guard (0...64).contains(threads) else { throw ValidationError("--threads must be 0…64") }
        if format == .y4m && !framemd5 && (pixelFormat == .nv12 || pixelFormat == .bgra) {
            throw ValidationError("y4m cannot hold \(pixelFormat.rawValue) (\(pixelFormat == .nv12 ? "interleaved chroma" : "packed RGB")): use --format raw")
        }
    }

    func run() throws { try runReportingErrors(command: "decode") { try decode() } }

    /// What the output handler shares with the reading thread.
    private struct Written {
        var output: DecodedFrameOutput
        var error: String?
    }

    private func decode() throws {
        let name = input == "-" ? "<stdin>" : input
        let out = try CLIIO.openOutput(output)
        let (descriptor, outputName) = (out.fileDescriptor, output)
        let state = Locked(Written(output: DecodedFrameOutput(format: framemd5 ? .framemd5 : format == .y4m ? .y4m : .raw)))
        let configuration = DecoderConfiguration(threads: threads == 0 ? .automatic : .count(threads), realTime: realTime,
                                                 outputPixelFormat: pixelFormat.output)
        let session = try DecoderSession(configuration: configuration) { frame in
            state.withLock { s in
                guard s.error == nil else { return }
                do {
                    let bytes = try CLIError.y4m(hint: "use --format raw") { try s.output.bytes(of: frame) }
                    try writeAll(descriptor, bytes, name: outputName)
                } catch {
                    s.error = "\(error)"
                }
            }
        }

        var stream: any ByteSource = try config.map { config -> any ByteSource in
            let (samples, record) = (try CLIIO.read(input), try CLIIO.read(config))
            return BufferSource(bytes: try CLIError.named(name) { () throws(MediaError) in try HEVCConversion.annexB(fromSamples: samples, configuration: record) })
        } ?? FileSource.annexB(path: input, name: name)

        var progress = ProgressLine(quiet: quiet.quiet)
        var decoder = AnnexBDecoder(session: session)
        try decodeAnnexB(from: &stream, into: &decoder, name: name, progress: &progress,
                         framesDone: { state.withLock { $0.output.frameCount } }, failure: { state.withLock { $0.error } })
        session.invalidate()
        if out !== FileHandle.standardOutput { try out.close() }
        let s = state.withLock { (frames: $0.output.frameCount, damaged: $0.output.damagedFrameCount, error: $0.error) }
        if let error = s.error { throw CLIError(error) }
        guard decoder.accessUnitCount > 0 else { throw CLIError("\(name): no decodable picture (no IDR with its SPS and PPS)") }
        let skipped = decoder.skippedAccessUnitCount
        progress.summarize("decoded", frames: s.frames, " → \(output)" + (s.damaged > 0 ? ", \(s.damaged) damaged" : "")
            + (skipped > 0 ? ", \(skipped) access units skipped before a usable IDR" : ""))
    }
}
