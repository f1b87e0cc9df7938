public import MediaCore
/// The one-byte NAL unit header (ITU-T H.264 clause 7.3.1).
public struct NALUnitHeader: Hashable, Sendable, CustomStringConvertible {
    /// `forbidden_zero_bit`: must be 0 in a conforming stream.
    public var forbiddenZeroBit: UInt8
    /// `nal_ref_idc`, 0…3: non-zero when the NAL unit carries data used for reference.
    public var nalRefIdc: UInt8
    /// `nal_unit_type`.
    public var nalUnitType: NALUnitType

    /// Creates a header from its fields.
    public init(nalRefIdc: UInt8, nalUnitType: NALUnitType, forbiddenZeroBit: UInt8 = 0) {
        self.forbiddenZeroBit = forbiddenZeroBit & 1
        self.nalRefIdc = nalRefIdc & 3
        self.nalUnitType = nalUnitType
    }

    /// Decodes a header byte without validation (a set `forbidden_zero_bit` is kept).
    public init(byte: UInt8) {
        self.forbiddenZeroBit = byte >> 7
        self.nalRefIdc = (byte >> 5) & 3
        self.nalUnitType = NALUnitType(rawValue: byte & 0x1F)
    }

    /// Decodes and validates the first byte of a NAL unit.
    ///
    /// - Throws: `MediaError.Code.emptyNALUnit` for no bytes,
    ///   `MediaError.Code.forbiddenZeroBit` when the forbidden bit is set.
    public init<Bytes: Collection<UInt8>>(validating nalUnit: Bytes) throws(MediaError) {
        guard let first = nalUnit.first else {
            throw MediaError(.emptyNALUnit, field: "nal_unit_header", "NAL unit has no header byte")
        }
        self.init(byte: first)
        if forbiddenZeroBit != 0 {
            throw MediaError(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: 0, "forbidden_zero_bit is 1")
        }
    }

    /// The header as its byte.
    public var byte: UInt8 { (forbiddenZeroBit << 7) | (nalRefIdc << 5) | nalUnitType.rawValue }

    /// e.g. `"IDR nal_ref_idc=3"`.
    public var description: String { "\(nalUnitType.shortName) nal_ref_idc=\(nalRefIdc)" }
}
