public import H264
public import HEVC

// H.265 in FLV and Enhanced RTMP (`hvc1`): the FLV tags and reader of this module carry its
// bytes; these read them as this module's types and write an hvcC sequence header.

extension FLVReader.Event {
    /// The format a sequence header of either codec announces: `VideoFormatDescription.h264(_:)`
    /// for an avcC, `VideoFormatDescription.hevc(_:)` for an `hvc1` hvcC; nil for other events.
    ///
    /// - Throws: the errors of `HEVCDecoderConfigurationRecord.init(parsing:)` for an hvcC
    ///   whose arrays do not parse (the reader checked only its fixed part).
    public func videoFormat() throws(MediaError) -> VideoFormatDescription? {
        switch self {
        case .sequenceHeader(let format): .h264(format)
        case .hevcSequenceHeader(let bytes): .hevc(try HEVCDecoderConfigurationRecord(parsing: bytes))
        default: nil
        }
    }
}

extension FLVVideoFrame {
    /// The frame as an H.265 access unit (an `FLVReader.Event.hevcFrame(_:)`'s): the same
    /// 4-byte-length bytes, stream offset and size, and each NAL unit's type from its two-byte
    /// header.
    public var hevcAccessUnit: HEVCAccessUnit {
        let data = accessUnit.data
        // The reader wrote these lengths itself: they hold.
        let units = (try? AVCC.nalUnits(in: data, lengthSize: 4, allowingEmptyNALUnits: true)) ?? []
        let types = units.filter { !$0.isEmpty }.map { range in
            HEVCNALUnitHeader(data[range.lowerBound], range.count > 1 ? data[range.lowerBound + 1] : 0).nalUnitType
        }
        return HEVCAccessUnit(data: data, nalUnitTypes: types, streamOffset: accessUnit.streamOffset, byteCount: accessUnit.byteCount)
    }
}

extension FLVWriter {
    /// Appends the sequence header of `format` as a keyframe tag: the avcC (in the writer's
    /// `FLVWriter.syntax`), or for H.265 the hvcC in an Enhanced RTMP `hvc1` `SequenceStart`.
    ///
    /// - Throws: as `FLVWriter.append(_:timestamp:)`.
    public mutating func appendSequenceHeader(_ format: VideoFormatDescription, timestamp: Int64 = 0) throws(MediaError) {
        if let h264 = format.h264 {
            try appendSequenceHeader(h264, timestamp: timestamp)
        } else {
            try append(FLVVideoTag.sequenceHeader(format, syntax: .enhanced), timestamp: timestamp)
        }
    }
}

extension FLVVideoTag {
    /// The sequence header tag of `format`: the avcC (legacy or enhanced, as `syntax` says) or the
    /// hvcC (`hvc1`, always enhanced).
    public static func sequenceHeader(_ format: VideoFormatDescription, syntax: Syntax) -> FLVVideoTag {
        if let h264 = format.h264 {
            FLVVideoTag(frameType: .keyframe, packet: .sequenceHeader(h264.configurationRecord), syntax: syntax)
        } else {
            FLVVideoTag(frameType: .keyframe, packet: .hevcSequenceHeader(format.configurationRecordBytes), syntax: .enhanced)
        }
    }
}
