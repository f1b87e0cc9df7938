public import MediaCore
/// One access unit: the NAL units of one primary coded picture and those that belong with it
/// (clause 7.4.1.2.3), in AVCC form.
public struct AccessUnit: Hashable, Sendable {
    /// The NAL units, each preceded by its length as a 4-byte big-endian number (AVCC, like
    /// VideoToolbox's sample buffers).
    public var data: [UInt8]
    /// The type of each NAL unit, in order.
    public var nalUnitTypes: [NALUnitType]
    /// Where the access unit begins in the byte stream it was cut from: the first byte after the
    /// previous access unit (so that the access units of a stream partition it exactly).
    public var streamOffset: Int
    /// How many bytes of the byte stream the access unit covers (start codes and trailing zero
    /// bytes included).
    public var byteCount: Int
    /// True when the access unit holds an IDR picture.
    public var isIDR: Bool { nalUnitTypes.contains(.idrSlice) }
    /// True when the access unit holds at least one VCL NAL unit (coded slice data).
    public var hasPicture: Bool { nalUnitTypes.contains { $0.isVCL } }
    /// The format (SPS and PPS) the access unit's first slice refers to, when they are known.
    public var formatDescription: FormatDescription?
    /// True when ``formatDescription`` differs from the previous access unit's that had one.
    public var formatChanged: Bool

    /// Creates an access unit.
    public init(data: [UInt8], nalUnitTypes: [NALUnitType], streamOffset: Int, byteCount: Int,
                formatDescription: FormatDescription? = nil, formatChanged: Bool = false) {
        self.data = data
        self.nalUnitTypes = nalUnitTypes
        self.streamOffset = streamOffset
        self.byteCount = byteCount
        self.formatDescription = formatDescription
        self.formatChanged = formatChanged
    }

    /// The NAL units (each header byte first), as slices of ``data``.
    public var nalUnits: [ArraySlice<UInt8>] {
        // `data` is written with 4-byte lengths by whoever built the access unit; one that does
        // not parse has no NAL units to show.
        ((try? AVCC.nalUnits(in: data, lengthSize: 4, allowingEmptyNALUnits: true)) ?? []).map { data[$0] }
    }
}
