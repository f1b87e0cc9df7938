public import MediaCore
/// What one codec's RTP payload format says about a payload, for ``RTPDepacketizerCore``: RFC
/// 6184 for H.264 (``RFC6184PayloadFormat``), RFC 7798 for H.265 (in the HEVC module). The two
/// share their structures — a single NAL unit, an aggregation of 16-bit-size/NAL-unit pairs
/// after a payload header, a fragmentation unit with S and E bits after it — and differ in the
/// size of the NAL unit header, the type numbers and where the NAL type sits; everything else
/// (sequence order, loss, access units, statistics) is the one core's.
package protocol RTPPayloadFormat: Sendable {
    /// The size of the NAL unit header, which is also the payload header: 1 (H.264) or 2 (H.265).
    static var nalHeaderSize: Int { get }
    /// The name of the fragmentation unit in diagnostics ("FU-A", "FU").
    static var fragmentName: String { get }
    /// The name of the aggregation packet in diagnostics ("STAP-A", "AP").
    static var aggregationName: String { get }
    /// The structure of a payload of at least one byte, from its first bytes.
    static func structure(of payload: UnsafeRawBufferPointer) -> RTPPayloadStructure
    /// The mask of the NAL unit type in a fragmentation unit's FU header (the bits below S, E
    /// and, for H.264, R).
    static var fragmentTypeMask: UInt8 { get }
    /// The NAL unit header of a fragmented NAL unit, from the fragmentation unit's payload header
    /// (its first ``nalHeaderSize`` bytes) and the type in its FU header; a one-byte header
    /// leaves the second byte 0.
    static func nalHeader(payloadHeader: UnsafeRawBufferPointer, fragmentType: UInt8) -> (UInt8, UInt8)
    /// True when a NAL unit with `firstByte` first is a coded slice (VCL): an access unit takes
    /// its timestamp from its first one, and a marker bit ends it only once it has one.
    static func isVCL(firstByte: UInt8) -> Bool
    /// Why a payload of `type` is not read, for its `MediaError.Code.unsupported` diagnostic.
    static func unsupportedReason(type: UInt8) -> String
    /// The payload header of an aggregation packet of `nalUnits` (each at least
    /// ``nalHeaderSize`` bytes); a one-byte header leaves the second byte 0.
    static func aggregationHeader(_ nalUnits: some Sequence<UnsafeRawBufferPointer>) -> (UInt8, UInt8)
    /// The payload header of the fragmentation units of a NAL unit with `nalHeader` (its first
    /// ``nalHeaderSize`` bytes), and the type to write in their FU headers.
    static func fragmentHeaders(nalHeader: UnsafeRawBufferPointer) -> (payloadHeader: (UInt8, UInt8), type: UInt8)
}

/// The payload structures both formats have, as ``RTPPayloadFormat/structure(of:)`` finds them.
package enum RTPPayloadStructure: Hashable, Sendable {
    /// One whole NAL unit.
    case singleNALUnit
    /// An aggregation packet (STAP-A, AP): size/NAL unit pairs after the payload header.
    case aggregation
    /// A fragmentation unit (FU-A, FU).
    case fragment
    /// A payload that begins with an Annex-B start code (a broken sender's).
    case startCode
    /// A structure not read (its type); the packet is dropped with a diagnostic.
    case unsupported(type: UInt8)
    /// A payload shorter than its payload header; the packet is dropped with a diagnostic.
    case truncated
}

/// RFC 6184 (H.264), non-interleaved: single NAL units (1–23), STAP-A (24) and FU-A (28).
package enum RFC6184PayloadFormat: RTPPayloadFormat {
    package static var nalHeaderSize: Int { 1 }
    package static var fragmentName: String { "FU-A" }
    package static var aggregationName: String { "STAP-A" }
    package static var fragmentTypeMask: UInt8 { 0x1F }

    @inline(__always)
    package static func structure(of payload: UnsafeRawBufferPointer) -> RTPPayloadStructure {
        switch payload[0] & 0x1F {
        case 28: .fragment
        case 1...23: .singleNALUnit
        case 24: .aggregation
        case 0 where AnnexB.beginsWithStartCode(payload): .startCode
        case let type: .unsupported(type: type)
        }
    }

    @inline(__always)
    package static func nalHeader(payloadHeader: UnsafeRawBufferPointer, fragmentType: UInt8) -> (UInt8, UInt8) {
        ((payloadHeader[0] & 0xE0) | fragmentType, 0)
    }

    @inline(__always)
    package static func isVCL(firstByte: UInt8) -> Bool { (1...5).contains(firstByte & 0x1F) }

    /// F = the OR of the F bits, NRI = the largest NRI, type 24 (RFC 6184 section 5.7.1).
    package static func aggregationHeader(_ nalUnits: some Sequence<UnsafeRawBufferPointer>) -> (UInt8, UInt8) {
        var forbidden: UInt8 = 0, nri: UInt8 = 0
        for unit in nalUnits {
            forbidden |= unit[0] & 0x80
            nri = max(nri, unit[0] & 0x60)
        }
        return (forbidden | nri | 24, 0)
    }

    /// The FU indicator: F and NRI of the NAL unit, type 28 (RFC 6184 section 5.8).
    package static func fragmentHeaders(nalHeader: UnsafeRawBufferPointer) -> (payloadHeader: (UInt8, UInt8), type: UInt8) {
        (((nalHeader[0] & 0xE0) | 28, 0), nalHeader[0] & 0x1F)
    }

    package static func unsupportedReason(type: UInt8) -> String {
        let names: [UInt8: String] = [25: "STAP-B", 26: "MTAP16", 27: "MTAP24", 29: "FU-B"]
        if let name = names[type] {
            return "\(name) (type \(type)) belongs to the interleaved packetization-mode 2, which is not supported"
        }
        return "payload type \(type) is undefined in RFC 6184"
    }
}
