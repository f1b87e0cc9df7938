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

    @Option(help: "Session preset: one of the encoder's named configurations (formerly --preset).")
    var sessionPreset: Preset?
    @Option(help: "x264/x265 speed preset, as FFmpeg's -preset (default: the session preset's, else medium).")
    var preset: PresetArgument?
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
    @Option(help: .hidden) var speed: String? // deprecated: --preset
    @Option(help: "x264 tune (film, animation, grain, stillimage, psnr, ssim, fastdecode, zerolatency).") var tune: String?
    @Option(help: "x264 threads (0: automatic).") var threads: Int?

    func validate() throws {
        if case .session(let old) = preset, let sessionPreset {
            throw ValidationError("--preset \(old.rawValue) is the old spelling of --session-preset: give --session-preset \(sessionPreset.rawValue) only")
        }
        if let speed, case .speed = preset { throw ValidationError("--speed \(speed) is the old spelling of --preset: give --preset only") }
    }

    /// The session preset: `--session-preset`, or the old spelling `--preset SESSION-PRESET`.
    var chosenSessionPreset: Preset? {
        if case .session(let old) = preset { return old }
        return sessionPreset
    }

    /// One line for each old spelling given (`--preset SESSION-PRESET`, `--speed NAME`): what
    /// to write instead. ``warnAboutOldSpellings(command:)`` prints them.
    var deprecations: [String] {
        var lines: [String] = []
        if case .session(let old) = preset {
            lines.append("--preset \(old.rawValue) is deprecated: write --session-preset \(old.rawValue) (--preset now takes x264/x265 presets, as FFmpeg's -preset)")
        }
        if let speed { lines.append("--speed \(speed) is deprecated: write --preset \(speed)") }
        return lines
    }

    /// Prints ``deprecations`` on standard error, one `h264 COMMAND: warning: …` line each
    /// (also with `--quiet`: it is about the command line, not the run).
    func warnAboutOldSpellings(command: String) {
        for line in deprecations { CLIIO.printLine(command: command, kind: "warning", line) }
    }

    /// The session configuration these options describe, starting from `--session-preset` or,
    /// without one, from `defaultPreset` (none: ``EncoderConfiguration/init()``); the codec is
    /// `--codec`, else the one `output`'s extension names (``codec(forOutput:)``); H.265 of
    /// 10-bit input is Main 10 unless `--profile` says otherwise.
    func configuration(frameRate: Double, bitDepth: Int = 8, defaultPreset: Preset? = nil, output: String? = nil) throws -> EncoderConfiguration {
        var c = (chosenSessionPreset ?? defaultPreset)?.configuration ?? EncoderConfiguration()
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
        if let speed { c.preset = try Self.parse(speed, "unknown x264 preset \(speed)") }
        if case .speed(let speed) = preset { c.preset = speed }
        if let tune { c.tune = try Self.parse(tune, "unknown x264 tune \(tune)") }
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
