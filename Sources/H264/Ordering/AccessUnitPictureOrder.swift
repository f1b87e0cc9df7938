/// The picture order count (clause 8.2.1) of access units given in decoding order: each
/// picture's first slice header read with the parameter sets of its access unit's format, and
/// counted by a ``PictureOrderCounter``. The one reading of an access unit's order that FLV's
/// timestamps and ``PresentationOrder`` share.
public struct AccessUnitPictureOrder: Sendable {
    private var counter = PictureOrderCounter()
    /// The parameter sets of the last format seen (formats change rarely; one is kept).
    private var cache: (format: FormatDescription, sets: ParameterSetCache)?
    private var last = 0

    /// A reader at the start of a stream.
    public init() {}

    /// The `PicOrderCnt` of `unit`, the next access unit in decoding order; for an access unit
    /// without a readable slice header or its parameter sets (damaged, or no format), one more
    /// than the previous count.
    ///
    /// - Parameter unit: an access unit with a picture, in decoding order.
    /// - Returns: its picture order count.
    public mutating func picOrderCnt(of unit: AccessUnit) -> Int {
        var count = last &+ 1
        if let format = unit.formatDescription,
           let slice = unit.nalUnits.first(where: { $0.first.map { NALUnitHeader(byte: $0).nalUnitType.isVCL } ?? false }) {
            if cache?.format != format {
                cache = (try? ParameterSetCache(configurationRecord: format.configurationRecord)).map { (format, $0) }
            }
            if let sets = cache?.sets, let header = try? SliceHeader(nalUnit: slice, parameterSets: sets),
               let pps = sets.pictureParameterSets[header.picParameterSetId],
               let sps = sets.sequenceParameterSets[pps.seqParameterSetId] {
                count = counter.picOrderCnt(of: header, sps: sps)
            }
        }
        last = count
        return count
    }
}
