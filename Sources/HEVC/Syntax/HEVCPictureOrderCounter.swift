public import MediaCore

/// Derives `PicOrderCntVal` of successive H.265 pictures in decoding order (clause 8.3.1):
/// presentation order within a coded video sequence is the order of these counts.
///
/// The most significant part restarts at 0 at every IRAP picture with `NoRaslOutputFlag` 1 — an
/// IDR or BLA picture, the first picture of the stream, and a CRA picture that is first after an
/// end of sequence (``endOfSequence()``); otherwise it follows the least significant part's
/// wrap-arounds against the previous `TemporalId` 0 picture that is not a RASL, RADL or
/// sub-layer non-reference picture (the rule H.264 shares). Arithmetic wraps rather than traps.
public struct HEVCPictureOrderCounter: Sendable {
    private var prevPicOrderCntLsb = 0
    private var prevPicOrderCntMsb = 0
    private var firstPicture = true

    /// Creates a counter at the start of a stream.
    public init() {}

    /// Marks an end of sequence: the next picture (an IRAP) starts counting afresh.
    public mutating func endOfSequence() { firstPicture = true }

    /// The picture order count of the picture whose first slice segment header is `slice`; call
    /// once per picture, in decoding order.
    ///
    /// - Parameters:
    ///   - slice: the picture's first slice segment header.
    ///   - sps: the sequence parameter set the slice refers to.
    public mutating func picOrderCntVal(of slice: HEVCSliceSegmentHeader, sps: HEVCSequenceParameterSet) -> Int {
        let type = slice.nalUnitHeader.nalUnitType
        let lsb = slice.slicePicOrderCntLsb
        let noRaslOutput = type.isIRAP && (type.isIDR || type.isBLA || firstPicture)
        firstPicture = false
        let msb = noRaslOutput ? 0 : picOrderCntMsb(lsb: lsb, maxLsb: sps.maxPicOrderCntLsb,
                                                                        prevLsb: prevPicOrderCntLsb, prevMsb: prevPicOrderCntMsb)
        if slice.nalUnitHeader.temporalId == 0 && !type.isLeadingPicture && !type.isSubLayerNonReference {
            prevPicOrderCntLsb = lsb
            prevPicOrderCntMsb = msb
        }
        return msb &+ lsb
    }
}
