/// The audio coding standard of a track. VideoToolbox's sibling AudioToolbox names them by
/// `AudioFormatID`: `kAudioFormatMPEG4AAC`, `kAudioFormatULaw`, `kAudioFormatALaw`,
/// `kAudioFormatOpus`.
public enum AudioCodec: String, Hashable, Sendable, CaseIterable {
    /// MPEG-4 AAC (ISO/IEC 14496-3): a frame is one raw `access_unit` (no ADTS header); the
    /// format's ``AudioFormatDescription/magicCookie`` is its `AudioSpecificConfig`.
    case aac
    /// G.711 µ-law (ITU-T G.711, RTP payload type 0 "PCMU"): one byte per sample.
    case pcmu
    /// G.711 A-law (ITU-T G.711, RTP payload type 8 "PCMA"): one byte per sample.
    case pcma
    /// Opus (RFC 6716): a frame is one Opus packet; timestamps are in 48 kHz units (RFC 7587).
    case opus

    /// The RTP encoding name of the codec's usual payload format (RFC 3640's `mpeg4-generic` for
    /// AAC; RFC 3551's `PCMU`, `PCMA`; RFC 7587's `opus`).
    public var rtpEncodingName: String {
        switch self {
        case .aac: "mpeg4-generic"
        case .pcmu: "PCMU"
        case .pcma: "PCMA"
        case .opus: "opus"
        }
    }
}

/// The format of a compressed audio track — what AudioToolbox keeps in one
/// `CMAudioFormatDescription`: the codec, the sampling rate, the channel count and the codec's
/// configuration bytes (its "magic cookie": an AAC `AudioSpecificConfig`, an Opus
/// identification header, nothing for G.711).
///
/// Frames of the track carry it in ``MediaFormatDescription/audio(_:)``; their timestamps count
/// in the track's own clock (``sampleRate``), converted to `Duration`.
public struct AudioFormatDescription: Hashable, Sendable {
    /// The coding standard.
    public var codec: AudioCodec
    /// Samples per second of one channel (AAC: the `AudioSpecificConfig`'s sampling frequency;
    /// G.711: 8000; Opus: 48000, the RTP clock RFC 7587 fixes whatever the input rate).
    public var sampleRate: Int
    /// The channel count (1 mono, 2 stereo, …).
    public var channelCount: Int
    /// The codec's configuration bytes: an AAC `AudioSpecificConfig` (ISO/IEC 14496-3
    /// 1.6.2.1), as an MP4 `esds` and an FLV AAC sequence header hold it; an Opus
    /// identification header (`OpusHead`, RFC 7845 5.1) or empty; empty for G.711
    /// (AudioToolbox: `CMAudioFormatDescriptionGetMagicCookie`).
    public var magicCookie: [UInt8]
    /// Samples per channel in one frame when the codec fixes it (AAC-LC: 1024; G.711 and Opus:
    /// nil, the frame's size says).
    public var samplesPerFrame: Int?

    /// A format of `codec` at `sampleRate` with `channelCount` channels.
    ///
    /// - Parameters:
    ///   - codec: the coding standard.
    ///   - sampleRate: samples per second of one channel.
    ///   - channelCount: the number of channels.
    ///   - magicCookie: the codec's configuration bytes (AAC: `AudioSpecificConfig`).
    ///   - samplesPerFrame: samples per channel in one frame, when the codec fixes it.
    public init(codec: AudioCodec, sampleRate: Int, channelCount: Int, magicCookie: [UInt8] = [],
                samplesPerFrame: Int? = nil) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.magicCookie = magicCookie
        self.samplesPerFrame = samplesPerFrame
    }
}
