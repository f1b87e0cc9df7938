import ArgumentParser
import Foundation
import H264Encoder

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

    @Option(help: "Session preset: \(Preset.allCases.map(\.rawValue).joined(separator: ", ")).") var preset: Preset?
    @Option(help: "Average bit rate, as FFmpeg's -b:v: \(BitRateArgument.syntax) (default: recommended for the size and rate).",
            transform: BitRateArgument.init(parsing:))
    var bitrate: BitRateArgument?
    @Option(help: "Constant quality (x264 CRF, 0–51) instead of a bit rate.") var crf: Double?
    @Option(help: "Codec: h264 (x264) or hevc (H.265 with x265) (default: hevc for -o *.265, *.h265, *.hevc, else h264).")
    var codec: String?
    @Option(help: "Profile: baseline, main or high (H.264); main or main10 (H.265, main10 for 10-bit input).") var profile: String?
    @Option(help: "Most frames between keyframes.") var maxKeyframeInterval: Int?
    @Option(help: "Most seconds between keyframes.") var maxKeyframeIntervalDuration: Double?
    @Flag(help: "Allow B-frames (frame reordering).") var allowFrameReordering = false
    @Option(help: "Data-rate limit BYTES:SECONDS (repeatable).") var dataRateLimit: [String] = []
    @Option(help: "x264 preset (ultrafast … placebo).") var speed: String?
    @Option(help: "x264 tune (film, animation, grain, stillimage, psnr, ssim, fastdecode, zerolatency).") var tune: String?
    @Option(help: "x264 threads (0: automatic).") var threads: Int?

    /// The session configuration these options describe, starting from `--preset` or, without
    /// one, from `defaultPreset` (none: ``EncoderConfiguration/init()``); the codec is `--codec`,
    /// else the one `output`'s extension names (``codec(forOutput:)``); H.265 of 10-bit input is
    /// Main 10 unless `--profile` says otherwise.
    func configuration(frameRate: Double, bitDepth: Int = 8, defaultPreset: Preset? = nil, output: String? = nil) throws -> EncoderConfiguration {
        var c = (preset ?? defaultPreset)?.configuration ?? EncoderConfiguration()
        c.expectedFrameRate = frameRate
        if let output { c.codec = Self.codec(forOutput: output) }
        if let codec { c.codec = try Self.parse(codec, "unknown codec \(codec) (h264, hevc)") }
        if bitDepth > 8 { c.hevcProfile = .main10 }
        if let bitrate { c.averageBitRate = bitrate.bitsPerSecond }
        if let crf { c.constantRateFactor = crf }
        if let profile { try c.setProfile(named: profile) }
        if let maxKeyframeInterval { c.maxKeyFrameInterval = maxKeyframeInterval }
        if let maxKeyframeIntervalDuration { c.maxKeyFrameIntervalDuration = maxKeyframeIntervalDuration }
        if allowFrameReordering { c.allowFrameReordering = true }
        c.dataRateLimits = try dataRateLimit.map { try EncoderConfiguration.DataRateLimit(parsing: $0) }
        if let speed { c.x264Preset = try Self.parse(speed, "unknown x264 preset \(speed)") }
        if let tune { c.x264Tune = try Self.parse(tune, "unknown x264 tune \(tune)") }
        if let threads { c.threads = threads }
        try c.validate()
        return c
    }

    /// The value whose raw value is `text`, else the error `unknown`.
    private static func parse<T: RawRepresentable<String>>(_ text: String, _ unknown: String) throws -> T {
        guard let value = T(rawValue: text) else { throw CLIError(unknown) }
        return value
    }
}
