import ArgumentParser
import Foundation
import H264Encoder

/// The input of `h264 encode` and `h264 serve`: a y4m file, `-` for y4m on standard input, or
/// raw I420 with `--size` and `--fps`.
struct InputOptions: ParsableArguments {
    @Argument(help: "Input: a .y4m file, - for y4m on standard input, or raw I420 with --size and --fps.")
    var input: String
    @Option(help: "Raw I420 input: frame size WxH.")
    var size: String?
    @Option(help: "Raw I420 input: frames per second (e.g. 30 or 30000/1001).")
    var fps: String?

    /// True when the input is standard input (it cannot be read twice).
    var isStandardInput: Bool { input == "-" }

    /// Opens the input: a frame reader and, for a file, how many frames it holds.
    func open() throws -> (FrameReader<FileSource>, totalFrames: Int?) {
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
        let source = FileSource(handle: handle, name: input == "-" ? "standard input" : input)
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
}

/// The encoder options of `h264 encode` and `h264 serve`.
struct EncodeOptions: ParsableArguments {
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

    /// The session configuration these options describe, starting from `--preset` or, without
    /// one, from `defaultPreset` (none: ``EncoderConfiguration/init()``).
    func configuration(frameRate: Double, defaultPreset: Preset? = nil) throws -> EncoderConfiguration {
        var c = (preset ?? defaultPreset)?.configuration ?? EncoderConfiguration()
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
}
