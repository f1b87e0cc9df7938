public import MediaCore

/// The two-byte H.265 NAL unit header, `nal_unit_header()` (ITU-T H.265 clause 7.3.1.2):
/// `forbidden_zero_bit` (1 bit), `nal_unit_type` (6), `nuh_layer_id` (6),
/// `nuh_temporal_id_plus1` (3).
public struct HEVCNALUnitHeader: Hashable, Sendable, CustomStringConvertible {
    /// `forbidden_zero_bit`: must be 0 in a conforming stream.
    public var forbiddenZeroBit: UInt8
    /// `nal_unit_type`.
    public var nalUnitType: HEVCNALUnitType
    /// `nuh_layer_id`, 0…63 (0 in single-layer streams; 63 is reserved).
    public var nuhLayerId: UInt8
    /// `nuh_temporal_id_plus1`, 1…7 (0 is forbidden).
    public var nuhTemporalIdPlus1: UInt8

    /// The length of the header in bytes.
    public static let byteCount = 2

    /// Creates a header from its fields (each masked to its width).
    public init(nalUnitType: HEVCNALUnitType, nuhLayerId: UInt8 = 0, nuhTemporalIdPlus1: UInt8 = 1, forbiddenZeroBit: UInt8 = 0) {
        self.forbiddenZeroBit = forbiddenZeroBit & 1
        self.nalUnitType = nalUnitType
        self.nuhLayerId = nuhLayerId & 0x3F
        self.nuhTemporalIdPlus1 = nuhTemporalIdPlus1 & 7
    }

    /// Decodes the two header bytes without validation.
    public init(_ first: UInt8, _ second: UInt8) {
        self.forbiddenZeroBit = first >> 7
        self.nalUnitType = HEVCNALUnitType(rawValue: (first >> 1) & 0x3F)
        self.nuhLayerId = ((first & 1) << 5) | (second >> 3)
        self.nuhTemporalIdPlus1 = second & 7
    }

    /// Decodes and validates the first two bytes of a NAL unit.
    ///
    /// - Throws: `MediaError.Code.emptyNALUnit` for fewer than two bytes,
    ///   `MediaError.Code.forbiddenZeroBit` when the forbidden bit is set,
    ///   `MediaError.Code.valueOutOfRange` when `nuh_temporal_id_plus1` is 0.
    public init<Bytes: Collection<UInt8>>(validating nalUnit: Bytes) throws(MediaError) {
        var bytes = nalUnit.makeIterator()
        guard let first = bytes.next(), let second = bytes.next() else {
            throw MediaError(.emptyNALUnit, field: "nal_unit_header", "NAL unit shorter than its 2-byte header")
        }
        self.init(first, second)
        if forbiddenZeroBit != 0 {
            throw MediaError(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: 0, bitOffset: 0, "forbidden_zero_bit is 1")
        }
        if nuhTemporalIdPlus1 == 0 {
            throw MediaError(.valueOutOfRange, field: "nuh_temporal_id_plus1", byteOffset: 1, bitOffset: 13,
                            "nuh_temporal_id_plus1 is 0, expected 1...7")
        }
    }

    /// `TemporalId`: `nuh_temporal_id_plus1` − 1 (−1 for the forbidden value 0).
    public var temporalId: Int { Int(nuhTemporalIdPlus1) - 1 }

    /// The header as its two bytes.
    public var bytes: [UInt8] {
        [(forbiddenZeroBit << 7) | (nalUnitType.rawValue << 1) | (nuhLayerId >> 5),
         ((nuhLayerId & 0x1F) << 3) | nuhTemporalIdPlus1]
    }

    /// e.g. `"IDR_W_RADL layer=0 tid=0"`.
    public var description: String { "\(nalUnitType.name) layer=\(nuhLayerId) tid=\(temporalId)" }
}

extension StreamNALUnit {
    /// The H.265 NAL unit header, decoded without validation (zero bytes stand in for a header
    /// cut short).
    public var hevcHeader: HEVCNALUnitHeader {
        HEVCNALUnitHeader(bytes.first ?? 0, bytes.count > 1 ? bytes[1] : 0)
    }
}
