public import MediaCore

/// One H.265 access unit: the NAL units of one coded picture and those that belong with it
/// (clause 7.4.2.4.4), in length-prefixed form.
public struct HEVCAccessUnit: Hashable, Sendable {
    /// The NAL units, each preceded by its length as a 4-byte big-endian number (HVCC, like
    /// an MP4 sample with `lengthSizeMinusOne` 3).
    public var data: [UInt8]
    /// The type of each NAL unit, in order.
    public var nalUnitTypes: [HEVCNALUnitType]
    /// Where the access unit begins in the byte stream it was cut from: the first byte after the
    /// previous access unit (so that the access units of a stream partition it exactly).
    public var streamOffset: Int
    /// How many bytes of the byte stream the access unit covers (start codes and trailing zero
    /// bytes included).
    public var byteCount: Int

    /// Creates an access unit.
    public init(data: [UInt8], nalUnitTypes: [HEVCNALUnitType], streamOffset: Int, byteCount: Int) {
        self.data = data
        self.nalUnitTypes = nalUnitTypes
        self.streamOffset = streamOffset
        self.byteCount = byteCount
    }

    /// True when the access unit holds an IRAP picture (BLA, IDR or CRA): a keyframe.
    public var isIRAP: Bool { nalUnitTypes.contains { $0.isIRAP } }
    /// True when the access unit holds at least one VCL NAL unit (a coded slice segment).
    public var hasPicture: Bool { nalUnitTypes.contains { $0.isVCL } }

    /// The NAL units (each header first), as slices of ``data``.
    public var nalUnits: [ArraySlice<UInt8>] {
        ((try? AVCC.nalUnits(in: data, lengthSize: 4, allowingEmptyNALUnits: true)) ?? []).map { data[$0] }
    }
}
