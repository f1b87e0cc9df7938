/// The boundary rule between the pictures of two slices (clause 7.4.1.2.4).
extension SliceHeader {
    /// True when a slice with this header, following `previous` (a VCL NAL unit of the current
    /// primary coded picture), must be the first VCL NAL unit of a new primary coded picture
    /// (clause 7.4.1.2.4).
    public func startsNewPicture(after previous: SliceHeader) -> Bool {
        PictureIdentity(self).startsNewPicture(after: PictureIdentity(previous))
    }

    /// What tells the pictures of two slices apart (clause 7.4.1.2.4), and where the slice
    /// begins, as plain values: the boundary rule keeps the last slice's and compares with it
    /// without retaining anything.
    package struct PictureIdentity: Equatable, Sendable {
        package var firstMbInSlice: Int
        package var picParameterSetId: Int
        package var frameNum: Int
        package var idrPicId: Int
        package var picOrderCntLsb: Int
        package var deltaPicOrderCntBottom: Int
        /// `delta_pic_order_cnt[0]` and `[1]`, of which the first `deltaPicOrderCntCount` are present.
        package var deltaPicOrderCnt0: Int
        package var deltaPicOrderCnt1: Int
        package var deltaPicOrderCntCount: Int
        package var redundantPicCnt: Int
        package var nalRefIdc: UInt8
        package var isIDR: Bool
        package var fieldPicFlag: Bool
        package var bottomFieldFlag: Bool

        package init(_ slice: SliceHeader) {
            firstMbInSlice = slice.firstMbInSlice
            picParameterSetId = slice.picParameterSetId
            frameNum = slice.frameNum
            idrPicId = slice.idrPicId
            picOrderCntLsb = slice.picOrderCntLsb
            deltaPicOrderCntBottom = slice.deltaPicOrderCntBottom
            deltaPicOrderCntCount = slice.deltaPicOrderCnt.count
            deltaPicOrderCnt0 = slice.deltaPicOrderCnt.first ?? 0
            deltaPicOrderCnt1 = slice.deltaPicOrderCnt.dropFirst().first ?? 0
            redundantPicCnt = slice.redundantPicCnt
            nalRefIdc = slice.nalRefIdc
            isIDR = slice.isIDR
            fieldPicFlag = slice.fieldPicFlag
            bottomFieldFlag = slice.bottomFieldFlag
        }

        /// See ``SliceHeader/startsNewPicture(after:)``: the one rule.
        package func startsNewPicture(after previous: PictureIdentity) -> Bool {
            if redundantPicCnt > 0 { return false }
            if frameNum != previous.frameNum { return true }
            if picParameterSetId != previous.picParameterSetId { return true }
            if fieldPicFlag != previous.fieldPicFlag { return true }
            if fieldPicFlag && bottomFieldFlag != previous.bottomFieldFlag { return true }
            if (nalRefIdc == 0) != (previous.nalRefIdc == 0) { return true }
            if picOrderCntLsb != previous.picOrderCntLsb || deltaPicOrderCntBottom != previous.deltaPicOrderCntBottom { return true }
            if deltaPicOrderCntCount != previous.deltaPicOrderCntCount || deltaPicOrderCnt0 != previous.deltaPicOrderCnt0
                || deltaPicOrderCnt1 != previous.deltaPicOrderCnt1 { return true }
            if isIDR != previous.isIDR { return true }
            if isIDR && previous.isIDR && idrPicId != previous.idrPicId { return true }
            return false
        }
    }
}
