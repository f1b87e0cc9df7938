import H264
import HEVC

/// The format of the compressed stream a job is decoded with: an H.264 `FormatDescription`
/// (SPS, PPS, avcC) or an H.265 `hvcC`. What the decoder needs of either is the same: the codec,
/// the parameter-set NAL units to send ahead of an access unit that lacks them, and the length
/// size of the samples.
enum StreamFormat: Hashable, Sendable {
    case h264(FormatDescription)
    case hevc(HEVCDecoderConfigurationRecord)

    var codec: VideoCodec {
        switch self {
        case .h264: .h264
        case .hevc: .hevc
        }
    }

    /// The NAL units libavcodec receives out of band, in decoding order: SPS then PPS for H.264;
    /// every array of the `hvcC` (VPS, SPS, PPS, SEI) for H.265, as `hevc_mp4toannexb` puts them.
    var parameterSets: [[UInt8]] {
        switch self {
        case .h264(let format): format.sequenceParameterSets + format.pictureParameterSets
        case .hevc(let record): record.nalUnits
        }
    }

    /// The length size of samples in this format.
    var nalUnitLengthSize: Int {
        switch self {
        case .h264(let format): format.nalUnitLengthSize
        case .hevc(let record): record.nalUnitLengthSize
        }
    }

    var h264: FormatDescription? {
        if case .h264(let format) = self { format } else { nil }
    }

    var hevc: HEVCDecoderConfigurationRecord? {
        if case .hevc(let record) = self { record } else { nil }
    }

    /// The output delay to open libavcodec with: the reorder depth the stream's SPS allows
    /// (H.264: `SequenceParameterSet.maximumReorderDepth`; H.265: `sps_max_num_reorder_pics`
    /// of the highest sub-layer), from the format or else from an SPS inside the access unit.
    static func reorderDepth(codec: VideoCodec, format: StreamFormat?, avcc: [UInt8], lengthSize: Int) -> Int? {
        guard codec == .hevc else {
            return SequenceParameterSet.reorderDepth(format: format?.h264, avcc: avcc, lengthSize: lengthSize)
        }
        let inBand = (try? AVCC.nalUnits(in: avcc, lengthSize: lengthSize, allowingEmptyNALUnits: true))?.map { Array(avcc[$0]) } ?? []
        for nalUnit in (format?.parameterSets ?? []) + inBand where nalUnit.count >= HEVCNALUnitHeader.byteCount {
            let header = HEVCNALUnitHeader(nalUnit[0], nalUnit[1])
            if header.nalUnitType == .sequenceParameterSet, header.nuhLayerId == 0,
               let sps = try? HEVCSequenceParameterSet(nalUnit: nalUnit) {
                return sps.maxNumReorderPics
            }
        }
        return nil
    }
}
