/// What a codec module's own format type tells code that only carries frames: H.264's
/// `FormatDescription` (SPS, PPS, `avcC`) and H.265's `HEVCDecoderConfigurationRecord` (VPS, SPS,
/// PPS, `hvcC`) conform, each in its own module, so ``VideoFormatDescription`` holds either
/// without this module knowing the codecs.
public protocol VideoCodecConfiguration: Hashable, Sendable {
    /// The coding standard.
    var codec: VideoCodec { get }
    /// The parameter-set NAL units (without start codes or lengths) in decoding order, as they
    /// go before a random access point.
    var parameterSets: [[UInt8]] { get }
    /// The size of the samples' NAL unit length prefixes: 1, 2 or 4.
    var nalUnitLengthSize: Int { get }
    /// The configuration record's bytes, as an MP4 sample entry or an FLV sequence header holds
    /// them (`avcC`, `hvcC`).
    var configurationRecordBytes: [UInt8] { get }
    /// The display size from the first SPS; (0, 0) when it has none or it cannot be read.
    var dimensions: (width: Int, height: Int) { get }
    /// The frame rate the first SPS's VUI timing signals; nil when it signals none.
    var framesPerSecond: Double? { get }
    /// One sample (length-prefixed NAL units) as Annex-B, with this format's parameter sets
    /// before it when `withParameterSets` (H.264: unless the sample carries its own; H.265: before
    /// an IRAP picture, as FFmpeg's `hevc_mp4toannexb` puts them).
    func annexB(fromSample sample: [UInt8], lengthSize: Int, withParameterSets: Bool) throws(MediaError) -> [UInt8]
}

extension VideoCodecConfiguration {
    /// Whether `other` is a configuration of this type equal to this one: `==` across the
    /// existential, without the allocation an `AnyHashable` costs.
    func isEqual(to other: any VideoCodecConfiguration) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}

/// The format of a compressed video stream of either codec — what VideoToolbox keeps in one
/// `CMVideoFormatDescription` whatever its `CMVideoCodecType`: an H.264 `FormatDescription`
/// (SPS, PPS, `avcC`) or an H.265 `HEVCDecoderConfigurationRecord` (VPS, SPS, PPS, `hvcC`).
///
/// What code that carries frames needs of a format is the same for both codecs: the codec, the
/// parameter-set NAL units to send ahead of a random access point, the samples' length size,
/// the picture size and the configuration record's bytes. Code that parses or writes one codec's
/// syntax asks for the form it understands: `format.h264` (import `H264`) or `format.hevc`
/// (import `HEVC`), nil for the other codec. Make one with `.h264(_:)` or `.hevc(_:)`, or with
/// ``init(_:)`` from any ``VideoCodecConfiguration``.
///
/// Made without an allocation: the configuration is held in the value's existential
/// container, where H.264's `FormatDescription` (one reference) fits; a format travels with
/// every frame, and copying one is a retain.
public struct VideoFormatDescription: Hashable, Sendable {
    /// The codec's own form.
    private let stored: any VideoCodecConfiguration

    /// A format holding `configuration` (an H.264 `FormatDescription`, an H.265
    /// `HEVCDecoderConfigurationRecord`).
    public init(_ configuration: some VideoCodecConfiguration) {
        stored = configuration
    }

    /// The codec's own form of the format; cast it (`as? FormatDescription`), or use the codec
    /// module's `h264` / `hevc` property.
    public var configuration: any VideoCodecConfiguration { stored }

    /// The stream's coding standard (VideoToolbox: `CMFormatDescriptionGetMediaSubType`).
    public var codec: VideoCodec { stored.codec }

    /// The parameter-set NAL units (without start codes or lengths) in decoding order, as they go
    /// before a random access point: SPS then PPS for H.264; every NAL unit of the `hvcC`'s
    /// arrays (VPS, SPS, PPS, SEI) for H.265, as FFmpeg's `hevc_mp4toannexb` puts them.
    /// VideoToolbox: `CMVideoFormatDescriptionGetH264ParameterSetAtIndex` /
    /// `…GetHEVCParameterSetAtIndex`.
    public var parameterSets: [[UInt8]] { stored.parameterSets }

    /// The size of the samples' NAL unit length prefixes: 1, 2 or 4.
    public var nalUnitLengthSize: Int { stored.nalUnitLengthSize }

    /// The configuration record's bytes, as an MP4 sample entry or an FLV sequence header holds
    /// them: the `avcC` or the `hvcC`.
    public var configurationRecordBytes: [UInt8] { stored.configurationRecordBytes }

    /// The display size from the first SPS (H.264: after cropping; H.265: the conformance
    /// window); (0, 0) when it has none or it cannot be read (VideoToolbox:
    /// `CMVideoFormatDescriptionGetDimensions`).
    public var dimensions: (width: Int, height: Int) { stored.dimensions }

    /// The frame rate the first SPS's VUI timing signals; nil when it signals none.
    public var framesPerSecond: Double? { stored.framesPerSecond }

    /// One sample (length-prefixed NAL units) as Annex-B, with the parameter sets before it when
    /// `withParameterSets` (H.264: unless the sample carries its own; H.265: before an IRAP
    /// picture, as FFmpeg's `hevc_mp4toannexb` puts them).
    public func annexB(fromSample sample: [UInt8], lengthSize: Int, withParameterSets: Bool) throws(MediaError) -> [UInt8] {
        try stored.annexB(fromSample: sample, lengthSize: lengthSize, withParameterSets: withParameterSets)
    }

    /// Equal when both hold equal configurations of the same codec.
    public static func == (lhs: VideoFormatDescription, rhs: VideoFormatDescription) -> Bool {
        lhs.stored.isEqual(to: rhs.stored)
    }

    /// Hashes the codec and the configuration.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(stored.codec)
        stored.hash(into: &hasher)
    }
}
