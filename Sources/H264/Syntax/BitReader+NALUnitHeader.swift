public import MediaCore

extension BitReader {
    /// Reads the NAL unit header byte as its three elements (clause 7.3.1) and checks the type.
    package mutating func readNALUnitHeader(expecting type: NALUnitType) throws(MediaError) {
        let forbidden = try readBits(1, "forbidden_zero_bit")
        if forbidden != 0 {
            throw MediaError(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: 0, bitOffset: 0, "forbidden_zero_bit is 1")
        }
        _ = try readBits(2, "nal_ref_idc")
        let nalUnitType = try readBits(5, "nal_unit_type")
        guard nalUnitType == Int(type.rawValue) else {
            throw MediaError(.unexpectedNALUnitType, field: "nal_unit_type", byteOffset: 0, bitOffset: 3,
                            "NAL unit type \(nalUnitType) (\(NALUnitType(rawValue: UInt8(nalUnitType)).name)), expected \(type.rawValue) (\(type.name))")
        }
    }
}

extension RBSP {
    /// The RBSP of a whole NAL unit (header byte kept), after checking that it has a header.
    package static func decodeNALUnit(_ nalUnit: some Collection<UInt8>) throws(MediaError) -> [UInt8] {
        guard !nalUnit.isEmpty else {
            throw MediaError(.emptyNALUnit, field: "nal_unit_header", "NAL unit has no header byte")
        }
        return decode(nalUnit)
    }
}
