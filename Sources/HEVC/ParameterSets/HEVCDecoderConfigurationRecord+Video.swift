public import MediaCore
/// An H.265 `hvcC` is one of the two forms a `VideoFormatDescription` holds.
extension HEVCDecoderConfigurationRecord: VideoCodecConfiguration {
    /// `VideoCodec.hevc`.
    public var codec: VideoCodec { .hevc }
    /// Every NAL unit of the record's arrays (VPS, SPS, PPS, SEI), as FFmpeg's `hevc_mp4toannexb`
    /// puts them before a random access point.
    public var parameterSets: [[UInt8]] { nalUnits }
    /// The `hvcC` (`bytes`).
    public var configurationRecordBytes: [UInt8] { bytes }
    /// The conformance window's size from the first SPS; (0, 0) when it has none or it cannot be
    /// read.
    public var dimensions: (width: Int, height: Int) {
        guard let sps = sequenceParameterSet else { return (0, 0) }
        return (sps.displayWidth, sps.displayHeight)
    }

    /// The first SPS's signalled frame rate (its VUI timing).
    public var framesPerSecond: Double? { sequenceParameterSet?.frameRate?.framesPerSecond }

    /// `AnnexB.fromHVCCSample(_:lengthSize:configuration:)` with this record when `withParameterSets`.
    public func annexB(fromSample sample: [UInt8], lengthSize: Int, withParameterSets: Bool) throws(MediaError) -> [UInt8] {
        try AnnexB.fromHVCCSample(sample, lengthSize: lengthSize, configuration: withParameterSets ? self : nil)
    }

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

extension VideoFormatDescription {
    /// A format for an H.265 stream.
    public static func hevc(_ record: HEVCDecoderConfigurationRecord) -> VideoFormatDescription {
        VideoFormatDescription(record)
    }

    /// The H.265 `hvcC`, or nil for a stream of another codec.
    public var hevc: HEVCDecoderConfigurationRecord? { configuration as? HEVCDecoderConfigurationRecord }
}
