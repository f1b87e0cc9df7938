import ArgumentParser
import Foundation
import H264
import H264Encoder
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `h264 encode INPUT -o OUTPUT`: y4m (file or `-` for standard input) or raw I420 to H.264.
struct EncodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Encode y4m or raw I420 video to H.264 (Annex-B .h264 or AVCC).",
        discussion: """
        INPUT is a .y4m file, - for y4m on standard input (ffmpeg -i in.mp4 -f yuv4mpegpipe - | h264 encode - -o out.h264), \
        or raw I420 with --size WxH --fps N. Annex-B output carries SPS and PPS before every IDR and plays in ffplay and VLC.
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case annexb, avcc }

    @OptionGroup var source: InputOptions
    @Option(name: .shortAndLong, help: "Output file (- for standard output).")
    var output: String
    @OptionGroup var encoding: EncodeOptions
    @Option(help: "Encode at most N frames.")
    var frames: Int?
    @Option(help: "Output format: annexb (default) or avcc (4-byte lengths; see --config-out).")
    var format: Format = .annexb
    @Option(help: "With --format avcc: write the avcC configuration record to this file.")
    var configOut: String?
    @Flag(help: "No progress and no summary.")
    var quiet = false

    func run() throws {
        try runReportingErrors(command: "encode") { try encode() }
    }

    private func encode() throws {
        if configOut != nil && format != .avcc { throw CLIError("--config-out needs --format avcc") }
        if let frames, frames < 1 { throw CLIError("--frames must be at least 1") }
        var (reader, total) = try source.open()
        let header = reader.header
        if let frames { total = min(total ?? frames, frames) }
        let configuration = try encoding.configuration(frameRate: header.frameRate)

        let out = try CLIIO.openOutput(output)
        let writer = AnnexBWriter()
        let annexB = format == .annexb
        let descriptor = out.fileDescriptor
        // The output handler runs on the session's queue; the state is shared with this thread.
        // `scratch` is the Annex-B buffer, reused frame to frame.
        let stats = Locked((frames: 0, bytes: 0, error: String?.none, format: FormatDescription?.none, scratch: [UInt8]()))
        let session = try EncoderSession(width: header.width, height: header.height, configuration: configuration) { frame in
            stats.withLock { s in
                guard s.error == nil else { return }
                do {
                    if annexB {
                        s.scratch.removeAll(keepingCapacity: true)
                        try writer.append(frame, to: &s.scratch)
                        try writeAll(descriptor, s.scratch, name: output)
                    } else {
                        try writeAll(descriptor, frame.data, name: output)
                    }
                } catch {
                    s.error = "\(error)"
                    return
                }
                s.frames += 1
                s.bytes += frame.data.count
                if s.format == nil { s.format = frame.formatDescription }
            }
        }
        let formatDescription = try session.prepare()

        let progress = !quiet && isatty(2) != 0
        let clock = ContinuousClock()
        let started = clock.now
        var lastProgress = started
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
            guard try reader.readFrame(into: &pool[slot]) else { break }
            let frame = try VideoFrame(pixelFormat: .i420, width: header.width, height: header.height, contiguous: pool[slot])
            try session.encode(frame, presentationTimeStamp: frameDuration * index, duration: frameDuration)
            index += 1
            if let error = stats.withLock({ $0.error }) { throw CLIError(error) }
            if progress, clock.now - lastProgress > .milliseconds(250) {
                lastProgress = clock.now
                let s = stats.withLock { ($0.frames, $0.bytes) }
                let elapsed = (clock.now - started) / .seconds(1)
                let rate = Double(s.0) / max(elapsed, 0.001)
                let kbps = s.0 > 0 ? Double(s.1) * 8 / (Double(s.0) / header.frameRate) / 1000 : 0
                var line = "\r\(s.0) frames, \(Self.format(rate)) fps, \(Self.format(kbps)) kbit/s"
                if let total, rate > 0 { line += ", \(Self.format(Double(max(0, total - s.0)) / rate)) s left" }
                FileHandle.standardError.write(Data((line + "   ").utf8))
            }
        }
        try session.completeFrames()
        session.invalidate()
        if out !== FileHandle.standardOutput { try out.close() }
        let s = stats.withLock { (frames: $0.frames, bytes: $0.bytes, error: $0.error, format: $0.format) }
        if let error = s.error { throw CLIError(error) }
        guard index > 0 else { throw CLIError("the input has no frames") }
        if let configOut {
            let avcC = (s.format ?? formatDescription).avcC
            guard FileManager.default.createFile(atPath: configOut, contents: Data(avcC)) else { throw CLIError("cannot create \(configOut)") }
        }
        if !quiet {
            let elapsed = (clock.now - started) / .seconds(1)
            let seconds = Double(s.frames) / header.frameRate
            let kbps = seconds > 0 ? Double(s.bytes) * 8 / seconds / 1000 : 0
            let line = "\(progress ? "\r" : "")encoded \(s.frames) frames \(header.width)x\(header.height) in \(Self.format(elapsed)) s "
                + "(\(Self.format(Double(s.frames) / max(elapsed, 0.001))) fps), \(s.bytes) bytes, \(Self.format(kbps)) kbit/s → \(output)\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

/// Writes all of `bytes` to a file descriptor (`write(2)`, retried after short writes).
func writeAll(_ descriptor: Int32, _ bytes: [UInt8], name: String) throws {
    try bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw CLIError("writing \(name == "-" ? "standard output" : name): \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }
}
