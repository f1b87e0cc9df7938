public import H264

/// The format of a compressed video stream of either codec — what VideoToolbox keeps in one
/// `CMVideoFormatDescription` whatever its `CMVideoCodecType`: an H.264 `FormatDescription`
/// (SPS, PPS, `avcC`) or an H.265 ``HEVCDecoderConfigurationRecord`` (VPS, SPS, PPS, `hvcC`).
///
/// What code that carries frames needs of a format is the same for both codecs: the codec, the
/// parameter-set NAL units to send ahead of a random access point, the samples' length size,
/// the picture size and the configuration record's bytes. Code that parses or writes one codec's
/// syntax takes the case it understands (``h264``, ``hevc``).
public enum VideoFormatDescription: Hashable, Sendable {
    /// An H.264 stream: its SPS, PPS and `avcC`.
    case h264(FormatDescription)
    /// An H.265 stream: its `hvcC` (VPS, SPS, PPS and any SEI arrays).
    ///
    /// Boxed (`indirect`): a format travels with every frame, and boxed it is one word for
    /// either codec — one retain to copy rather than the record's many words, and no word of
    /// an `.h264` value left uninitialized (valgrind took the enum tag kept in such a word's
    /// top bit for a use of uninitialized memory on every frame).
    indirect case hevc(HEVCDecoderConfigurationRecord)

    /// The stream's coding standard (VideoToolbox: `CMFormatDescriptionGetMediaSubType`).
    public var codec: VideoCodec {
        switch self {
        case .h264: .h264
        case .hevc: .hevc
        }
    }

    /// The parameter-set NAL units (without start codes or lengths) in decoding order, as they go
    /// before a random access point: SPS then PPS for H.264; every NAL unit of the `hvcC`'s
    /// arrays (VPS, SPS, PPS, SEI) for H.265, as FFmpeg's `hevc_mp4toannexb` puts them.
    /// VideoToolbox: `CMVideoFormatDescriptionGetH264ParameterSetAtIndex` /
    /// `…GetHEVCParameterSetAtIndex`.
    public var parameterSets: [[UInt8]] {
        switch self {
        case .h264(let format): format.sequenceParameterSets + format.pictureParameterSets
        case .hevc(let record): record.nalUnits
        }
    }

    /// The size of the samples' NAL unit length prefixes: 1, 2 or 4.
    public var nalUnitLengthSize: Int {
        switch self {
        case .h264(let format): format.nalUnitLengthSize
        case .hevc(let record): record.nalUnitLengthSize
        }
    }

    /// The configuration record's bytes, as an MP4 sample entry or an FLV sequence header holds
    /// them: the `avcC` or the `hvcC`.
    public var configurationRecordBytes: [UInt8] {
        switch self {
        case .h264(let format): format.avcC
        case .hevc(let record): record.bytes
        }
    }

    /// The display size from the first SPS (H.264: after cropping; H.265: the conformance
    /// window); (0, 0) when it has none or it cannot be read (VideoToolbox:
    /// `CMVideoFormatDescriptionGetDimensions`).
    public var dimensions: (width: Int, height: Int) {
        switch self {
        case .h264(let format):
            return format.dimensions
        case .hevc(let record):
            guard let sps = record.sequenceParameterSet else { return (0, 0) }
            return (sps.displayWidth, sps.displayHeight)
        }
    }

    /// The H.264 format, or nil for an H.265 stream.
    public var h264: FormatDescription? {
        if case .h264(let format) = self { format } else { nil }
    }

    /// The H.265 `hvcC`, or nil for an H.264 stream.
    public var hevc: HEVCDecoderConfigurationRecord? {
        if case .hevc(let record) = self { record } else { nil }
    }
}

extension HEVCDecoderConfigurationRecord {
    /// The first SPS of the record's arrays, parsed; nil when it has none or it cannot be read.
    public var sequenceParameterSet: HEVCSequenceParameterSet? {
        for array in arrays where array.nalUnitType == .sequenceParameterSet {
            for nalUnit in array.nalUnits {
                if let sps = try? HEVCSequenceParameterSet(nalUnit: nalUnit) { return sps }
            }
        }
        return nil
    }
}
