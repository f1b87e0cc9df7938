import ArgumentParser
import Foundation
import H264
import H264Encoder
import Synchronization

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
        if configOut != nil && format != .avcc { throw Y4MError("--config-out needs --format avcc") }
        if let frames, frames < 1 { throw Y4MError("--frames must be at least 1") }
        var (reader, total) = try source.open()
        let header = reader.header
        if let frames { total = min(total ?? frames, frames) }
        let configuration = try encoding.configuration(frameRate: header.frameRate)

        let out: FileHandle
        if output == "-" {
            out = .standardOutput
        } else {
            guard FileManager.default.createFile(atPath: output, contents: nil), let h = FileHandle(forWritingAtPath: output) else {
                throw Y4MError("cannot create \(output)")
            }
            out = h
        }
        let writer = AnnexBWriter()
        let annexB = format == .annexb
        let stats = Mutex((frames: 0, bytes: 0, error: String?.none, format: FormatDescription?.none))
        let session = try EncoderSession(width: header.width, height: header.height, configuration: configuration) { frame in
            var bytes: [UInt8] = []
            if annexB {
                do { try writer.append(frame, to: &bytes) } catch { stats.withLock { $0.error = "\(error)" }; return }
            } else {
                bytes = frame.data
            }
            do { try out.write(contentsOf: bytes) } catch { stats.withLock { $0.error = "writing: \(error)" } }
            stats.withLock { s in
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
        let frameDuration = Duration.seconds(Double(header.frameRateDenominator) / Double(header.frameRateNumerator))
        var index = 0
        while frames.map({ index < $0 }) ?? true, let bytes = try reader.nextFrame() {
            let frame = try VideoFrame(pixelFormat: .i420, width: header.width, height: header.height, contiguous: bytes)
            try session.encode(frame, presentationTimeStamp: frameDuration * index, duration: frameDuration)
            index += 1
            if index % 8 == 0 { try session.waitForQueuedFrames() }
            if let error = stats.withLock({ $0.error }) { throw Y4MError(error) }
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
        let s = stats.withLock { $0 }
        if let error = s.error { throw Y4MError(error) }
        guard index > 0 else { throw Y4MError("the input has no frames") }
        if let configOut {
            let avcC = (s.format ?? formatDescription).avcC
            guard FileManager.default.createFile(atPath: configOut, contents: Data(avcC)) else { throw Y4MError("cannot create \(configOut)") }
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

/// Reads a file handle in chunks.
struct FileSource: ByteSource {
    let handle: FileHandle
    mutating func read(upTo count: Int) throws -> [UInt8] {
        [UInt8](try handle.read(upToCount: count) ?? Data())
    }
}
