/// The H.265 access-unit boundary rule (clause 7.4.2.4.4): whether a NAL unit begins a new
/// access unit. The one rule behind ``HEVCAccessUnitAssembler``.
///
/// Once the current access unit holds a coded picture, a new one begins with the first of: an
/// access unit delimiter, VPS, SPS, PPS, prefix SEI, NAL unit types 41…44 or 48…55, or a slice
/// segment with `first_slice_segment_in_pic_flag` set (the top bit of the byte after the
/// header). NAL units with `nuh_layer_id` > 0 never begin one. End of sequence and end of
/// bitstream stay with the access unit before them; the next NAL unit begins a new one.
/// Slice segments of the reserved VCL types (10…15, 22…31), whose layout is not known, stay
/// where they fall.
struct HEVCAccessUnitBoundary: Sendable {
    /// True while the current access unit holds no NAL unit.
    private(set) var isEmpty = true
    private var hasPicture = false
    private var closed = false

    /// True for the VCL types whose payload begins with `slice_segment_header()`.
    static func hasSliceSegmentHeader(_ type: HEVCNALUnitType) -> Bool {
        type.rawValue <= 9 || (type.rawValue >= 16 && type.rawValue <= 21)
    }

    /// Whether the NAL unit with `header`, whose payload begins with `firstPayloadByte`, begins a
    /// new access unit (never the very first unit). Follow it with ``record(_:startsNew:)``.
    func startsNew(_ header: HEVCNALUnitHeader, firstPayloadByte: UInt8) -> Bool {
        if isEmpty { return false }
        if closed { return true }
        guard header.nuhLayerId == 0, hasPicture else { return false }
        let type = header.nalUnitType
        if Self.hasSliceSegmentHeader(type) { return firstPayloadByte & 0x80 != 0 }
        switch type.rawValue {
        case 32...35, 39, 41...44, 48...55: return true
        default: return false
        }
    }

    /// Records the NAL unit just decided on: starts a new access unit first when `startsNew`.
    mutating func record(_ header: HEVCNALUnitHeader, startsNew: Bool) {
        if startsNew { self = HEVCAccessUnitBoundary() }
        isEmpty = false
        let type = header.nalUnitType
        if header.nuhLayerId == 0 && Self.hasSliceSegmentHeader(type) { hasPicture = true }
        if type == .endOfSequence || type == .endOfBitstream { closed = true }
    }
}
