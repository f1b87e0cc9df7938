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

    enum Preset: String, ExpressibleByArgument, CaseIterable {
        case liveCapture = "live-capture", ultraLowLatency = "ultra-low-latency"
        case activeTranscoding = "active-transcoding", backgroundTranscoding = "background-transcoding"
        var configuration: EncoderConfiguration {
            switch self {
            case .liveCapture: .liveCapture
            case .ultraLowLatency: .ultraLowLatency
            case .activeTranscoding: .activeTranscoding
            case .backgroundTranscoding: .backgroundTranscoding
            }
        }
    }
    enum Format: String, ExpressibleByArgument, CaseIterable { case annexb, avcc }

    @Argument(help: "Input: a .y4m file, - for y4m on standard input, or raw I420 with --size and --fps.")
    var input: String
    @Option(name: .shortAndLong, help: "Output file (- for standard output).")
    var output: String
    @Option(help: "Raw I420 input: frame size WxH.")
    var size: String?
    @Option(help: "Raw I420 input: frames per second (e.g. 30 or 30000/1001).")
    var fps: String?
    @Option(help: "Session preset: \(Preset.allCases.map(\.rawValue).joined(separator: ", ")).")
    var preset: Preset?
    @Option(help: "Average bit rate in bits per second (default: the recommendation for the size and rate).")
    var bitrate: Int?
    @Option(help: "Constant quality (x264 CRF, 0–51) instead of a bit rate.")
    var crf: Double?
    @Option(help: "Profile: baseline, main or high.")
    var profile: String?
    @Option(help: "Most frames between keyframes.")
    var maxKeyframeInterval: Int?
    @Option(help: "Most seconds between keyframes.")
    var maxKeyframeIntervalDuration: Double?
    @Flag(help: "Allow B-frames (frame reordering).")
    var allowFrameReordering = false
    @Option(help: "Data-rate limit BYTES:SECONDS (repeatable).")
    var dataRateLimit: [String] = []
    @Option(help: "x264 preset (ultrafast … placebo).")
    var speed: String?
    @Option(help: "x264 tune (film, animation, grain, stillimage, psnr, ssim, fastdecode, zerolatency).")
    var tune: String?
    @Option(help: "x264 threads (0: automatic).")
    var threads: Int?
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

    private func makeConfiguration(frameRate: Double) throws -> EncoderConfiguration {
        var c = preset?.configuration ?? EncoderConfiguration()
        c.expectedFrameRate = frameRate
        if let bitrate { c.averageBitRate = bitrate }
        if let crf { c.constantRateFactor = crf }
        if let profile {
            guard let p = EncoderConfiguration.Profile(rawValue: profile) else {
                throw Y4MError("unknown profile \(profile) (baseline, main, high)")
            }
            c.profile = p
        }
        if let maxKeyframeInterval { c.maxKeyFrameInterval = maxKeyframeInterval }
        if let maxKeyframeIntervalDuration { c.maxKeyFrameIntervalDuration = maxKeyframeIntervalDuration }
        if allowFrameReordering { c.allowFrameReordering = true }
        c.dataRateLimits = try dataRateLimit.map { text in
            let parts = text.split(separator: ":")
            guard parts.count == 2, let bytes = Int(parts[0]), let seconds = Double(parts[1]) else {
                throw Y4MError("bad --data-rate-limit \(text) (BYTES:SECONDS)")
            }
            return EncoderConfiguration.DataRateLimit(bytes: bytes, seconds: seconds)
        }
        if let speed {
            guard let p = EncoderConfiguration.X264Preset(rawValue: speed) else { throw Y4MError("unknown x264 preset \(speed)") }
            c.x264Preset = p
        }
        if let tune {
            guard let t = EncoderConfiguration.X264Tune(rawValue: tune) else { throw Y4MError("unknown x264 tune \(tune)") }
            c.x264Tune = t
        }
        if let threads { c.threads = threads }
        try c.validate()
        return c
    }

    private func openInput() throws -> (FrameReader<FileSource>, totalFrames: Int?) {
        let handle: FileHandle
        var fileSize: Int?
        if input == "-" {
            handle = .standardInput
        } else {
            guard FileManager.default.fileExists(atPath: input) else { throw Y4MError("no such file: \(input)") }
            guard let h = FileHandle(forReadingAtPath: input) else { throw Y4MError("cannot read \(input)") }
            handle = h
            fileSize = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? nil
        }
        let source = FileSource(handle: handle)
        if let size {
            let parts = size.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0, w <= 16_384, h <= 16_384,
                  w % 2 == 0, h % 2 == 0
            else { throw Y4MError("bad --size \(size) (WxH, even, up to 16384)") }
            let rate = try Self.parseRate(fps ?? "30")
            let reader = FrameReader(rawI420: source, width: w, height: h, frameRateNumerator: rate.0, frameRateDenominator: rate.1)
            return (reader, fileSize.map { $0 / (w * h * 3 / 2) })
        }
        guard fps == nil else { throw Y4MError("--fps is for raw I420 input (with --size); y4m carries its rate") }
        let reader = try FrameReader(y4m: source)
        let total = fileSize.map { $0 / (reader.header.frameBytes + 6) }
        return (reader, total)
    }

    static func parseRate(_ text: String) throws -> (Int, Int) {
        let parts = text.split(separator: "/")
        if parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n > 0, d > 0, n <= 1_000_000, d <= 1_000_000 { return (n, d) }
        if parts.count == 1, let v = Double(text), v >= 0.1, v <= 1000 {
            return v == v.rounded() ? (Int(v), 1) : (Int((v * 1000).rounded()), 1000)
        }
        throw Y4MError("bad --fps \(text) (a number or N/D, 0.1…1000)")
    }

    private func encode() throws {
        if configOut != nil && format != .avcc { throw Y4MError("--config-out needs --format avcc") }
        if let frames, frames < 1 { throw Y4MError("--frames must be at least 1") }
        var (reader, total) = try openInput()
        let header = reader.header
        if let frames { total = min(total ?? frames, frames) }
        let configuration = try makeConfiguration(frameRate: header.frameRate)

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
