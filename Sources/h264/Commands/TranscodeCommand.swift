import ArgumentParser
import Foundation
import H264
import MediaContainers
import H264Decoder
import H264Encoder

/// `h264 transcode INPUT -o OUTPUT`: an Annex-B H.264 stream decoded by a `DecoderSession` and
/// encoded again by an `EncoderSession`, with every `h264 encode` option.
struct TranscodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcode",
        abstract: "Decode H.264 or H.265 and encode it again, with the encode options.",
        discussion: """
        INPUT: an Annex-B stream ('-' for standard input) or an MP4, of 8-bit or 10-bit 4:2:0 pictures. -o x.mp4 writes \
        MP4; -o x.265 (or --codec hevc) H.265, which 10-bit input needs. The default session preset is active-transcoding; \
        --size WxH scales every picture.
        """)

    @Argument(help: "The stream to transcode ('-' for standard input).") var input: String
    @OptionGroup var out: OutputOption
    @OptionGroup var encoding: EncodeOptions
    @Option(help: "Scale every picture to WxH (even) before encoding.") var size: String?
    @Option(help: "Decoding threads (0 = automatic, the default).") var decoderThreads: Int = 0
    @OptionGroup var quiet: QuietFlag

    func validate() throws {
        guard (0...64).contains(decoderThreads) else { throw ValidationError("--decoder-threads must be 0…64") }
        if let size { _ = try CLIError.input { () throws(MediaError) in try SizeAndRate.size(size) } }
    }

    func run() throws { try runReportingErrors(command: "transcode") { try transcode() } }

    private struct State {
        var encoder: EncoderSession?
        var decoded = 0, encoded = 0, bytes = 0
        var error: String?
        var lastTime: Duration?
        var output: EncodedFileOutput
    }

    private func transcode() throws {
        encoding.warnAboutOldSpellings(command: "transcode")
        let name = input == "-" ? "<stdin>" : input
        let outputName = out.output
        var source = try FileSource.annexB(path: input, name: name)
        // -o FILE.mp4: a progressive MP4 (index at the front); else Annex-B.
        let state = Locked(State(output: try EncodedFileOutput(path: outputName)))
        let options = encoding
        let targetSize = try size.map { size in try CLIError.input { () throws(MediaError) in try SizeAndRate.size(size) } }
        // Encoded access units: written (Annex-B or MP4) on the encoder's queue.
        let encodedHandler: EncoderSession.OutputHandler = { frame in
            state.withLock { s in
                guard s.error == nil else { return }
                do {
                    s.bytes += try s.output.write(frame)
                    s.encoded += 1
                } catch {
                    s.error = "\(error)"
                }
            }
        }
        // Decoded frames: handed to the encoder on the decoder's queue (the encoder, created
        // with the first frame's size and rate, queues them and returns).
        let decoderConfiguration = DecoderConfiguration(threads: decoderThreads == 0 ? .automatic : .count(decoderThreads))
        let decoder = try DecoderSession(configuration: decoderConfiguration) { frame in
            do {
                guard frame.layout == .planar, frame.chromaFormat == .yuv420, frame.bitDepth == 8 || frame.bitDepth == 10 else {
                    throw CLIError("\(name): \(frame.pixelFormatName) pictures: transcode takes 8-bit or 10-bit 4:2:0")
                }
                let encoder = try state.withLock { s throws -> EncoderSession in
                    if let error = s.error { throw CLIError(error) }
                    if let encoder = s.encoder { return encoder }
                    let seconds = frame.duration / .seconds(1)
                    let configuration = try options.configuration(frameRate: seconds > 0 ? 1 / seconds : 25, bitDepth: frame.bitDepth,
                                                                  defaultPreset: .activeTranscoding, output: outputName)
                    if frame.bitDepth > 8 && configuration.codec != .hevc {
                        throw CLIError("\(name): 10-bit pictures are encoded as H.265 Main 10: add --codec hevc (or write .265)")
                    }
                    let encoder = try EncoderSession(width: targetSize?.width ?? frame.width, height: targetSize?.height ?? frame.height,
                                                     configuration: configuration,
                                                     outputHandler: encodedHandler)
                    s.encoder = encoder
                    return encoder
                }
                var picture = try VideoFrame(pixelFormat: frame.bitDepth > 8 ? .yuv420p10 : .i420, width: frame.width, height: frame.height,
                                             contiguous: frame.packedBytes())
                if let targetSize, (targetSize.width, targetSize.height) != (frame.width, frame.height) {
                    picture = try picture.scaled(width: targetSize.width, height: targetSize.height)
                }
                let time = state.withLock { s -> Duration in
                    // The encoder needs increasing times: a frame out of order follows the last.
                    var time = frame.presentationTimeStamp
                    if let last = s.lastTime, time <= last { time = last + max(frame.duration, .microseconds(1)) }
                    s.lastTime = time
                    s.decoded += 1
                    return time
                }
                try encoder.waitForQueuedFrames(downTo: 4)
                try encoder.encode(picture, presentationTimeStamp: time, duration: frame.duration)
            } catch {
                state.withLock { if $0.error == nil { $0.error = "\(error)" } }
            }
        }

        var progress = ProgressLine(quiet: quiet.quiet)
        var adaptor = AnnexBDecoder(session: decoder)
        try decodeAnnexB(from: &source, into: &adaptor, name: name, progress: &progress,
                         framesDone: { state.withLock { $0.encoded } }, failure: { state.withLock { $0.error } })
        decoder.invalidate()
        let encoder = state.withLock { $0.encoder }
        if let encoder {
            do throws(MediaError) { try encoder.completeFrames() } catch { throw CLIError("encoding: \(error)") }
            encoder.invalidate()
        }
        if state.withLock({ $0.error == nil }) { try state.withLock { try $0.output.finish() } }
        let s = state.withLock { (decoded: $0.decoded, encoded: $0.encoded, bytes: $0.bytes, error: $0.error) }
        if let error = s.error { throw CLIError(error) }
        guard adaptor.accessUnitCount > 0 else { throw CLIError("\(name): no decodable picture (no IDR with its SPS and PPS)") }
        progress.summarize("transcoded", frames: s.decoded, rateFrames: s.encoded, ", \(s.bytes) bytes → \(outputName)")
    }
}
