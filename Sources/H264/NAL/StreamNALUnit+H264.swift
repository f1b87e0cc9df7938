public import MediaCore

extension StreamNALUnit {
    /// The NAL unit header (clause 7.3.1), decoded without validation.
    public var header: NALUnitHeader { NALUnitHeader(byte: bytes.first ?? 0) }
    /// `nal_unit_type`.
    public var nalUnitType: NALUnitType { header.nalUnitType }
    /// `nal_ref_idc`.
    public var nalRefIdc: UInt8 { header.nalRefIdc }
}
