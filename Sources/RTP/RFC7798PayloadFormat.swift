import H264
package import HEVC

/// RFC 7798 (H.265) for `RTPDepacketizerCore`: the payload header is a 2-byte NAL unit header;
/// types 0–47 are single NAL units, 48 an aggregation packet (AP), 49 a fragmentation unit (FU:
/// S, E and the 6-bit type), 50 PACI (not read), 51–63 undefined.
package enum RFC7798PayloadFormat: RTPPayloadFormat {
    package static var nalHeaderSize: Int { 2 }
    package static var fragmentName: String { "FU" }
    package static var aggregationName: String { "AP" }
    package static var fragmentTypeMask: UInt8 { 0x3F }

    package static func structure(of payload: UnsafeRawBufferPointer) -> RTPPayloadStructure {
        if AnnexB.beginsWithStartCode(payload) { return .startCode }
        guard payload.count >= 2 else { return .truncated }
        let type = (payload[0] >> 1) & 0x3F
        switch type {
        case 0...47: return .singleNALUnit
        case 48: return .aggregation
        case 49: return .fragment
        default: return .unsupported(type: type)
        }
    }

    /// F and the layer and temporal ids of the payload header, the type of the FU header (RFC
    /// 7798 section 4.4.3).
    package static func nalHeader(payloadHeader: UnsafeRawBufferPointer, fragmentType: UInt8) -> (UInt8, UInt8) {
        ((payloadHeader[0] & 0x81) | (fragmentType << 1), payloadHeader[1])
    }

    /// Types 0–31.
    package static func isVCL(firstByte: UInt8) -> Bool { firstByte & 0x40 == 0 }

    /// F = the OR of the F bits, type 48, the lowest `nuh_layer_id` and the lowest
    /// `nuh_temporal_id_plus1` of the aggregated units (RFC 7798 section 4.4.2).
    package static func aggregationHeader(_ nalUnits: some Sequence<UnsafeRawBufferPointer>) -> (UInt8, UInt8) {
        var forbidden: UInt8 = 0, layer: UInt8 = 63, temporal: UInt8 = 7
        for unit in nalUnits {
            forbidden |= unit[0] & 0x80
            layer = min(layer, (unit[0] & 1) << 5 | unit[1] >> 3)
            temporal = min(temporal, unit[1] & 7)
        }
        return (forbidden | 48 << 1 | layer >> 5, (layer & 0x1F) << 3 | temporal)
    }

    /// The payload header: the NAL unit header with type 49 (RFC 7798 section 4.4.3).
    package static func fragmentHeaders(nalHeader: UnsafeRawBufferPointer) -> (payloadHeader: (UInt8, UInt8), type: UInt8) {
        (((nalHeader[0] & 0x81) | 49 << 1, nalHeader[1]), (nalHeader[0] >> 1) & 0x3F)
    }

    package static func unsupportedReason(type: UInt8) -> String {
        switch type {
        case 50: "PACI (type 50) is not read; its payload is skipped"
        default: "payload type \(type) is undefined in RFC 7798"
        }
    }
}

/// The assembler keeps what the HEVC depacketizer receives, by the H.265 access-unit rule.
extension HEVCAccessUnitAssembler: RTPAccessUnitStorage {
    package typealias Format = RFC7798PayloadFormat

    /// Copies every byte: nothing to keep.
    package func usePacket(_ owner: borrowing [UInt8], bytes: UnsafeRawBufferPointer) {}

    /// Never: the core gathers fragmented NAL units whole.
    package func beginNALUnit(header: UInt8, leading: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Bool { false }

    /// Never called (`beginNALUnit(header:leading:streamOffset:)` is always false).
    package func appendToNALUnit(_ bytes: UnsafeBufferPointer<UInt8>) {}

    /// Never called (`beginNALUnit(header:leading:streamOffset:)` is always false).
    package func endNALUnit() {}

    package mutating func finishAccessUnit() -> HEVCAccessUnit? { finish() }

    package mutating func dropAccessUnit() { _ = finish() }
}
