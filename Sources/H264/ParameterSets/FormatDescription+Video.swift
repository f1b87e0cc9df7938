public import MediaCore
/// An H.264 format is one of the two forms a `VideoFormatDescription` holds.
extension FormatDescription: VideoCodecConfiguration {
    /// `VideoCodec.h264`.
    public var codec: VideoCodec { .h264 }
    /// The SPS NAL units, then the PPS NAL units.
    public var parameterSets: [[UInt8]] { sequenceParameterSets + pictureParameterSets }
    /// The `avcC`.
    public var configurationRecordBytes: [UInt8] { avcC }
    /// The first SPS's ``SequenceParameterSet/frameRate``.
    public var framesPerSecond: Double? { sequenceParameterSet?.frameRate }
    /// `AnnexB.fromAVCC(_:lengthSize:parameterSets:allowingEmptyNALUnits:)` with this format's
    /// record when `withParameterSets`.
    public func annexB(fromSample sample: [UInt8], lengthSize: Int, withParameterSets: Bool) throws(MediaError) -> [UInt8] {
        try AnnexB.fromAVCC(sample, lengthSize: lengthSize, parameterSets: withParameterSets ? configurationRecord : nil)
    }
}

extension VideoFormatDescription {
    /// A format for an H.264 stream.
    public static func h264(_ format: FormatDescription) -> VideoFormatDescription {
        VideoFormatDescription(format)
    }

    /// The H.264 format, or nil for a stream of another codec.
    public var h264: FormatDescription? { configuration as? FormatDescription }
}
