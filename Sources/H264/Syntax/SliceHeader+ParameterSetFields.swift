import MediaCore
extension SliceHeader {
    /// What of a PPS and the SPS it names the leading elements of a slice header depend on: a
    /// plain value, kept per PPS by ``ParameterSetCache`` so that reading the slice header of
    /// each received picture copies no parameter set.
    package struct ParameterSetFields: Hashable, Sendable {
        package var separateColourPlaneFlag: Bool
        package var log2MaxFrameNumMinus4: Int
        package var frameMbsOnlyFlag: Bool
        package var picOrderCntType: Int
        package var log2MaxPicOrderCntLsbMinus4: Int
        package var deltaPicOrderAlwaysZeroFlag: Bool
        package var bottomFieldPicOrderInFramePresentFlag: Bool
        package var redundantPicCntPresentFlag: Bool

        package init(pps: PictureParameterSet, sps: SequenceParameterSet) {
            separateColourPlaneFlag = sps.separateColourPlaneFlag
            log2MaxFrameNumMinus4 = sps.log2MaxFrameNumMinus4
            frameMbsOnlyFlag = sps.frameMbsOnlyFlag
            picOrderCntType = sps.picOrderCntType
            log2MaxPicOrderCntLsbMinus4 = sps.log2MaxPicOrderCntLsbMinus4
            deltaPicOrderAlwaysZeroFlag = sps.deltaPicOrderAlwaysZeroFlag
            bottomFieldPicOrderInFramePresentFlag = pps.bottomFieldPicOrderInFramePresentFlag
            redundantPicCntPresentFlag = pps.redundantPicCntPresentFlag
        }

        /// The fields of PPS `pictureParameterSetId` and its SPS.
        ///
        /// - Throws: `MediaError.Code.missingParameterSet` when the PPS or its SPS is unknown.
        package init(pictureParameterSetId: Int, pictureParameterSets: [Int: PictureParameterSet],
             sequenceParameterSets: [Int: SequenceParameterSet]) throws(MediaError) {
            guard let pps = pictureParameterSets[pictureParameterSetId] else {
                throw MediaError(.missingParameterSet, field: "pic_parameter_set_id",
                                "slice refers to PPS \(pictureParameterSetId), which has not been seen")
            }
            guard let sps = sequenceParameterSets[pps.seqParameterSetId] else {
                throw MediaError(.missingParameterSet, field: "seq_parameter_set_id",
                                "PPS \(pictureParameterSetId) refers to SPS \(pps.seqParameterSetId), which has not been seen")
            }
            self.init(pps: pps, sps: sps)
        }
    }
}
