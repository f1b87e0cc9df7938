import ArgumentParser
import H264Encoder

/// `--preset NAME`: x264's speed/quality preset (x265's of the same name for H.265), as
/// FFmpeg's `-preset` takes it: ultrafast, superfast, veryfast, faster, fast, medium, slow,
/// slower, veryslow, placebo.
///
/// The old spelling, `--preset SESSION-PRESET` (live-capture …, now `--session-preset`), is
/// still read, as ``session(_:)``: no session preset is named like an x264 preset, so a value
/// is one or the other.
enum PresetArgument: Equatable, Sendable, ExpressibleByArgument {
    /// An x264/x265 preset.
    case speed(EncoderConfiguration.SpeedPreset)
    /// A session preset given the old way (deprecated: `--session-preset`).
    case session(EncodeOptions.Preset)

    init?(argument: String) {
        if let speed = EncoderConfiguration.SpeedPreset(rawValue: argument) {
            self = .speed(speed)
        } else if let session = EncodeOptions.Preset(rawValue: argument) {
            self = .session(session)
        } else {
            return nil
        }
    }

    /// The names help and errors list: x264's only (the session presets' are deprecated here).
    static var allValueStrings: [String] { EncoderConfiguration.SpeedPreset.allCases.map(\.rawValue) }
}
