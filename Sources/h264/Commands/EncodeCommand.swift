import ArgumentParser
import Foundation
import H264
import H264Encoder
import MediaContainers

/// `h264 encode INPUT -o OUTPUT`: y4m (file or `-` for standard input) or raw I420 to H.264 or H.265.
struct EncodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Encode y4m or raw I420 to H.264 or H.265 (Annex-B, MP4, AVCC/HVCC).",
        discussion: """
        INPUT: a .y4m file, - for y4m on standard input, or raw I420 with --size WxH --fps N. \
        -o x.265 (.h265, .hevc) writes H.265, other names H.264, unless --codec says otherwise; -o x.mp4 \
        writes MP4. 10-bit y4m encodes as H.265 Main 10. Example: h264 encode in.y4m -o out.265 --bitrate 2M --preset veryfast
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case annexb, avcc }

    @OptionGroup var source: InputOptions
    @OptionGroup var out: OutputOption
    @OptionGroup var encoding: EncodeOptions
    @Option(help: "Encode at most N frames.") var frames: Int?
    @Option(help: "Output format: annexb (default) or avcc (4-byte lengths; see --config-out).") var format: Format = .annexb
    @Option(help: "With --format avcc: write the avcC (H.265: hvcC) configuration record to this file.") var configOut: String?
    @OptionGroup var quiet: QuietFlag

    func run() throws { try runReportingErrors(command: "encode") { try encode() } }

    /// What the session's output handler shares with the reading thread; `scratch` is the
    /// Annex-B buffer, reused frame to frame.
    private struct Written {
        var frames = 0, bytes = 0
        var error: String?
        var configurationRecord: [UInt8]?
        var output: EncodedFileOutput
    }

    private func encode() throws {
        encoding.warnAboutOldSpellings(command: "encode")
        if configOut != nil && format != .avcc { throw CLIError("--config-out needs --format avcc") }
        if let frames, frames < 1 { throw CLIError("--frames must be at least 1") }
        var (reader, total) = try source.open()
        let header = reader.header
        if let frames { total = min(total ?? frames, frames) }
        let configuration = try encoding.configuration(frameRate: header.frameRate, bitDepth: header.bitDepth, output: out.output)

        let output = out.output
        if format == .avcc && ConvertCommand.isMP4Name(output) { throw CLIError("-o \(output) is MP4: --format avcc is for raw samples") }
        let stats = Locked(Written(output: try EncodedFileOutput(path: output, samples: format == .avcc)))
        let session = try EncoderSession(width: header.width, height: header.height, configuration: configuration) { frame in
            stats.withLock { s in
                guard s.error == nil else { return }
                do {
                    _ = try s.output.write(frame)
                } catch {
                    s.error = "\(error)"
                    return
                }
                s.frames += 1
                s.bytes += frame.data.count
                if s.configurationRecord == nil { s.configurationRecord = frame.format.configurationRecordBytes }
            }
        }
        let formatDescription = try session.prepare()

        var progress = ProgressLine(quiet: quiet.quiet)
        let frameDuration = header.rate.frameDuration
        // Frames are read into buffers reused round robin. Before a buffer is read into again,
        // the loop waits until at most `pool.count - 1` frames are queued: the frame that used
        // it has then been handed to x264 and released, so the read goes into it in place, and
        // x264 always has the next frames in hand and never waits for the reader. (Were the
        // frame still referenced, reading into its buffer would copy it first: a queued frame
        // never changes.)
        var pool = [[UInt8]](repeating: [], count: 4)
        var index = 0
        while frames.map({ index < $0 }) ?? true {
            let slot = index % pool.count
            try session.waitForQueuedFrames(downTo: pool.count - 1)
            guard try CLIError.reading({ try reader.readFrame(into: &pool[slot]) }) else { break }
            let frame = try VideoFrame(pixelFormat: header.bitDepth > 8 ? .yuv420p10 : .i420, width: header.width, height: header.height, contiguous: pool[slot])
            try session.encode(frame, presentationTimeStamp: frameDuration * index, duration: frameDuration)
            index += 1
            if let error = stats.withLock({ $0.error }) { throw CLIError(error) }
            progress.update { elapsed in
                let s = stats.withLock { ($0.frames, $0.bytes) }
                let rate = Double(s.0) / max(elapsed, 0.001)
                let kbps = s.0 > 0 ? Double(s.1) * 8 / (Double(s.0) / header.frameRate) / 1000 : 0
                var line = "\(s.0) frames, \(ProgressLine.format(rate)) fps, \(ProgressLine.format(kbps)) kbit/s"
                if let total, rate > 0 { line += ", \(ProgressLine.format(Double(max(0, total - s.0)) / rate)) s left" }
                return line
            }
        }
        try session.completeFrames()
        session.invalidate()
        let s = stats.withLock { $0 }
        if let error = s.error { throw CLIError(error) }
        try s.output.finish()
        guard index > 0 else { throw CLIError("the input has no frames") }
        if let configOut {
            let record = s.configurationRecord ?? formatDescription.configurationRecordBytes
            guard FileManager.default.createFile(atPath: configOut, contents: Data(record)) else { throw CLIError("cannot create \(configOut)") }
        }
        let seconds = Double(s.frames) / header.frameRate, kbps = seconds > 0 ? Double(s.bytes) * 8 / seconds / 1000 : 0
        progress.summarize("encoded", frames: s.frames, size: " \(header.width)x\(header.height)",
                           ", \(s.bytes) bytes, \(ProgressLine.format(kbps)) kbit/s → \(output)")
    }
}
