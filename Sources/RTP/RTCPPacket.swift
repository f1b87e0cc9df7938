public import MediaCore
/// One packet of a compound RTCP packet (RFC 3550 clause 6): what a receiver reads from the
/// RTCP port or the RTCP interleaved channel.
///
/// ```swift
/// for packet in try RTCPPacket.packets(in: datagram) {
///     if case .senderReport(let report, _) = packet { clock.synchronize(report) }
/// }
/// ```
///
/// ``packets(in:)-(UnsafeRawBufferPointer)`` reads every packet of the compound; a damaged one
/// (version not 2, a length past the end, more report blocks or padding than the packet holds)
/// makes the whole compound invalid, as RFC 3550 appendix A.2 says, and is thrown as an
/// `MediaError`. Parsing is bounded by the input's size and never traps.
public enum RTCPPacket: Hashable, Sendable {
    /// SR (packet type 200): the sender's report, its ``RTCPSenderReport/canonicalName`` from an
    /// SDES CNAME item of the same SSRC in the compound (empty without one), and the reception
    /// reports it carries.
    case senderReport(RTCPSenderReport, receptionReports: [RTCPReceptionReport])
    /// RR (201): the reporter's SSRC and its reception reports.
    case receiverReport(ssrc: UInt32, receptionReports: [RTCPReceptionReport])
    /// SDES (202): the chunks, one per source.
    case sourceDescription([RTCPSourceDescription])
    /// BYE (203): the sources leaving, and the reason if one is given.
    case goodbye(ssrcs: [UInt32], reason: String?)
    /// Any other packet type (APP 204, RTPFB 205, PSFB 206, XR 207, …), skipped.
    case other(packetType: UInt8)

    /// The packets of a compound RTCP packet (a UDP payload or an interleaved frame's data).
    ///
    /// - Throws: `MediaError.Code.truncated` when a packet's length, report count, SDES item or
    ///   BYE reason goes past its end; `MediaError.Code.valueOutOfRange` for a version other than
    ///   2 (field `V`) or padding larger than the packet (field `P`).
    public static func packets(in bytes: UnsafeRawBufferPointer) throws(MediaError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else {
                throw MediaError(.truncated, field: "rtcp_header", byteOffset: offset, "\(bytes.count - offset) bytes, an RTCP header needs 4")
            }
            let first = bytes[offset], type = bytes[offset + 1]
            guard first >> 6 == 2 else {
                throw MediaError(.valueOutOfRange, field: "V", byteOffset: offset, "RTCP version \(first >> 6), not 2")
            }
            let size = ((Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])) + 1) * 4
            guard size <= bytes.count - offset else {
                throw MediaError(.truncated, field: "length", byteOffset: offset, "an RTCP packet of \(size) bytes, \(bytes.count - offset) left")
            }
            var end = offset + size
            if first & 0x20 != 0 {
                let padding = Int(bytes[end - 1])
                guard padding >= 1, padding <= size - 4 else {
                    throw MediaError(.valueOutOfRange, field: "P", byteOffset: end - 1, "\(padding) padding bytes in an RTCP packet of \(size)")
                }
                end -= padding
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<end])
            packets.append(try packet(type: type, count: Int(first & 0x1F), body: body, at: offset))
            offset += size
        }
        return packets.map { packet in
            guard case .senderReport(var report, let blocks) = packet else { return packet }
            report.canonicalName = packets.lazy.compactMap { packet -> String? in
                guard case .sourceDescription(let chunks) = packet else { return nil }
                return chunks.first { $0.ssrc == report.ssrc }?.canonicalName
            }.first ?? ""
            return .senderReport(report, receptionReports: blocks)
        }
    }

    /// ``packets(in:)-(UnsafeRawBufferPointer)`` on bytes in an array.
    public static func packets(in bytes: [UInt8]) throws(MediaError) -> [RTCPPacket] {
        try bytes.withUnsafeBytes { buffer in Result { () throws(MediaError) in try packets(in: buffer) } }.get()
    }

    /// One packet's body (after the 4-byte header, without padding) as `type` with `count`
    /// (RC or SC) items.
    private static func packet(type: UInt8, count: Int, body: UnsafeRawBufferPointer, at offset: Int) throws(MediaError) -> RTCPPacket {
        func word(_ index: Int) -> UInt32 { UInt32(BigEndian.read(body, at: index, count: 4)) }
        func need(_ bytes: Int, _ field: String) throws(MediaError) {
            guard body.count >= bytes else {
                throw MediaError(.truncated, field: field, byteOffset: offset, "\(field) needs \(bytes) bytes, the packet has \(body.count)")
            }
        }
        func blocks(from start: Int) throws(MediaError) -> [RTCPReceptionReport] {
            try need(start + count * 24, "report_block")
            return (0..<count).map { RTCPReceptionReport(parsing: body, at: start + $0 * 24) }
        }
        switch type {
        case 200:
            try need(24, "sender_info")
            let report = RTCPSenderReport(ssrc: word(0), ntpTimestamp: UInt64(word(4)) << 32 | UInt64(word(8)), rtpTimestamp: word(12),
                                          packetCount: word(16), octetCount: word(20), canonicalName: "")
            return .senderReport(report, receptionReports: try blocks(from: 24))
        case 201:
            try need(4, "SSRC")
            return .receiverReport(ssrc: word(0), receptionReports: try blocks(from: 4))
        case 202:
            return .sourceDescription(try RTCPSourceDescription.chunks(count: count, in: body, at: offset))
        case 203:
            try need(count * 4, "SSRC")
            let ssrcs = (0..<count).map { word($0 * 4) }
            guard body.count > count * 4 else { return .goodbye(ssrcs: ssrcs, reason: nil) }
            let length = Int(body[count * 4])
            try need(count * 4 + 1 + length, "reason")
            let reason = String(decoding: UnsafeRawBufferPointer(rebasing: body[(count * 4 + 1)..<(count * 4 + 1 + length)]), as: UTF8.self)
            return .goodbye(ssrcs: ssrcs, reason: reason)
        default:
            return .other(packetType: type)
        }
    }
}
