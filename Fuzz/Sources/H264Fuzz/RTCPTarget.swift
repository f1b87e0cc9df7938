import H264
import RTP

extension FuzzTarget {
    /// The input as a compound RTCP packet: parsing never traps; every receiver report parsed
    /// writes back to bytes that parse to the same report blocks, every sender report gives a
    /// wall-clock time for any timestamp without trapping, and the input's `RTPSourceStatistics`
    /// (its bytes as RTP headers) report without trapping.
    static func rtcp(_ bytes: [UInt8]) {
        guard let packets = try? RTCPPacket.packets(in: bytes) else { return }
        for packet in packets {
            switch packet {
            case .receiverReport(let ssrc, let blocks):
                let written = RTCPReceiverReport(ssrc: ssrc, receptionReports: blocks, canonicalName: "fuzz").bytes
                let reread = try? RTCPPacket.packets(in: written)
                check(reread?.first == .receiverReport(ssrc: ssrc, receptionReports: Array(blocks.prefix(31))), "RR does not survive its bytes")
            case .senderReport(let report, _):
                _ = report.wallClock(of: report.rtpTimestamp &+ 1)
                _ = report.wallClock(of: report.rtpTimestamp &- 0x8000_0000)
            case .sourceDescription, .goodbye, .other:
                break
            }
        }
        var statistics = RTPSourceStatistics()
        var offset = 0
        while offset + RTPHeader.fixedSize <= bytes.count {
            if let (header, _) = try? RTPHeader.parse(Array(bytes[offset..<(offset + RTPHeader.fixedSize)])) {
                statistics.count(header, arrival: UInt32(offset))
            }
            offset += RTPHeader.fixedSize
        }
        _ = statistics.report()
    }
}
