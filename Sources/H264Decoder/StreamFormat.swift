import H264
import HEVC

/// The format of the compressed stream a job is decoded with, of either codec: what the decoder
/// needs of it (the codec, the parameter sets to send ahead of an access unit that lacks them,
/// the samples' length size) is `VideoFormatDescription`'s.
typealias StreamFormat = VideoFormatDescription

extension VideoFormatDescription {
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
