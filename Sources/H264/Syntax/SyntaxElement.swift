/// One syntax element as read from the bitstream: its name and value.
///
/// Names are the H.264 specification's (clause 7.3 and Annex E), which are also FFmpeg's
/// `trace_headers` names; array elements carry their index, e.g. `offset_for_ref_frame[0]` or
/// `delta_scale[5]` (counted within each scaling list). This is what `h264 inspect --json` prints.
public struct SyntaxElement: Hashable, Sendable, CustomStringConvertible {
    /// The element's name, e.g. `"pic_width_in_mbs_minus1"`.
    public let name: String
    /// The element's value; flags are 0 or 1, `se(v)` values may be negative.
    public let value: Int

    /// Creates an element.
    public init(name: String, value: Int) {
        self.name = name
        self.value = value
    }

    /// `name = value`.
    public var description: String { "\(name) = \(value)" }
}

extension BitReader {
    /// The recorded elements as ``SyntaxElement`` values.
    package var syntaxElements: [SyntaxElement] {
        elements.map { SyntaxElement(name: $0.name, value: $0.value) }
    }

    /// Reads the NAL unit header byte as its three elements (clause 7.3.1) and checks the type.
    mutating func readNALUnitHeader(expecting type: NALUnitType) throws(H264Error) {
        let forbidden = try readBits(1, "forbidden_zero_bit")
        if forbidden != 0 {
            throw H264Error(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: 0, bitOffset: 0, "forbidden_zero_bit is 1")
        }
        _ = try readBits(2, "nal_ref_idc")
        let nalUnitType = try readBits(5, "nal_unit_type")
        guard nalUnitType == Int(type.rawValue) else {
            throw H264Error(.unexpectedNALUnitType, field: "nal_unit_type", byteOffset: 0, bitOffset: 3,
                            "NAL unit type \(nalUnitType) (\(NALUnitType(rawValue: UInt8(nalUnitType)).name)), expected \(type.rawValue) (\(type.name))")
        }
    }
}

extension RBSP {
    /// The RBSP of a whole NAL unit (header byte kept), after checking that it has a header.
    static func decodeNALUnit(_ nalUnit: some Collection<UInt8>) throws(H264Error) -> [UInt8] {
        guard !nalUnit.isEmpty else {
            throw H264Error(.emptyNALUnit, field: "nal_unit_header", "NAL unit has no header byte")
        }
        return decode(nalUnit)
    }
}
