/// Derives the picture order count of successive pictures in decoding order (clause 8.2.1):
/// `PicOrderCnt` of a frame is the smaller of `TopFieldOrderCnt` and `BottomFieldOrderCnt`, of a
/// field its own. Presentation order within a coded video sequence is the order of these counts.
///
/// All three `pic_order_cnt_type`s are derived (8.2.1.1, 8.2.1.2, 8.2.1.3). A
/// `memory_management_control_operation` equal to 5 is not seen (``SliceHeader`` stops before
/// `dec_ref_pic_marking()`), so a stream that uses it gets counts that keep growing across it
/// instead of restarting; counts always restart at an IDR picture. Arithmetic wraps rather than
/// traps on absurd inputs.
public struct PictureOrderCounter: Sendable {
    private var prevPicOrderCntMsb = 0
    private var prevPicOrderCntLsb = 0
    private var prevFrameNumOffset = 0
    private var prevFrameNum = 0

    /// Creates a counter at the start of a stream.
    public init() {}

    /// The picture order count of the picture whose first slice header is `slice`; call once
    /// per picture, in decoding order.
    ///
    /// - Parameters:
    ///   - slice: the picture's first slice header.
    ///   - sps: the sequence parameter set the slice refers to.
    public mutating func picOrderCnt(of slice: SliceHeader, sps: SequenceParameterSet) -> Int {
        let isReference = slice.nalRefIdc != 0
        var top = 0
        var bottom = 0
        switch sps.picOrderCntType {
        case 0:
            if slice.isIDR {
                prevPicOrderCntMsb = 0
                prevPicOrderCntLsb = 0
            }
            let lsb = slice.picOrderCntLsb
            let msb = picOrderCntMsb(lsb: lsb, maxLsb: 1 << (sps.log2MaxPicOrderCntLsbMinus4 + 4),
                                          prevLsb: prevPicOrderCntLsb, prevMsb: prevPicOrderCntMsb)
            top = msb &+ lsb
            bottom = slice.fieldPicFlag ? top : top &+ slice.deltaPicOrderCntBottom
            if isReference {
                prevPicOrderCntMsb = msb
                prevPicOrderCntLsb = lsb
            }
        case 1:
            let frameNumOffset = self.frameNumOffset(slice, sps: sps)
            let cycle = sps.offsetForRefFrame
            var absFrameNum = cycle.isEmpty ? 0 : frameNumOffset &+ slice.frameNum
            if !isReference && absFrameNum > 0 { absFrameNum -= 1 }
            var expected = 0
            if absFrameNum > 0 {
                let cycleCount = (absFrameNum - 1) / cycle.count
                let inCycle = (absFrameNum - 1) % cycle.count
                let deltaPerCycle = cycle.reduce(0, &+)
                expected = cycleCount &* deltaPerCycle
                for index in 0...inCycle { expected = expected &+ cycle[index] }
            }
            if !isReference { expected = expected &+ sps.offsetForNonRefPic }
            let delta0 = slice.deltaPicOrderCnt.first ?? 0
            let delta1 = slice.deltaPicOrderCnt.count > 1 ? slice.deltaPicOrderCnt[1] : 0
            if !slice.fieldPicFlag {
                top = expected &+ delta0
                bottom = top &+ sps.offsetForTopToBottomField &+ delta1
            } else {
                top = expected &+ delta0
                bottom = expected &+ sps.offsetForTopToBottomField &+ delta0
            }
            prevFrameNumOffset = frameNumOffset
            prevFrameNum = slice.frameNum
        default:
            let frameNumOffset = self.frameNumOffset(slice, sps: sps)
            let count: Int
            if slice.isIDR {
                count = 0
            } else {
                let twice = 2 &* (frameNumOffset &+ slice.frameNum)
                count = isReference ? twice : twice &- 1
            }
            top = count
            bottom = count
            prevFrameNumOffset = frameNumOffset
            prevFrameNum = slice.frameNum
        }
        if !slice.fieldPicFlag { return Swift.min(top, bottom) }
        return slice.bottomFieldFlag ? bottom : top
    }

    /// `FrameNumOffset` (8.2.1.2, 8.2.1.3).
    private func frameNumOffset(_ slice: SliceHeader, sps: SequenceParameterSet) -> Int {
        if slice.isIDR { return 0 }
        let maxFrameNum = 1 << (sps.log2MaxFrameNumMinus4 + 4)
        return prevFrameNum > slice.frameNum ? prevFrameNumOffset &+ maxFrameNum : prevFrameNumOffset
    }
}
