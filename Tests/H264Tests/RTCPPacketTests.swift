import H264
import H264TestSupport
import Testing
import RTP

/// `RTCPPacket.packets(in:)` on real compound packets (what `h264 serve --rtsp` sends, and the
/// layouts FFmpeg's rtpenc.c and rtpdec.c write), the receiver report written back, the reception
/// statistics of RFC 3550 appendix A, and damaged packets refused with their field, never a trap.
@Suite(.ownThread) struct RTCPPacketTests {
    /// Our server's SR + SDES CNAME parses back to the same report, its CNAME included.
    @Test func ourSenderReportParsesBack() throws {
        let report = RTCPSenderReport(ssrc: 0x1234_5678, ntpTimestamp: RTCPSenderReport.ntpTimestamp(unixSeconds: 1_700_000_000, nanoseconds: 500_000_000),
                                      rtpTimestamp: 90_000, packetCount: 90, octetCount: 81_000, canonicalName: "camera")
        let packets = try RTCPPacket.packets(in: report.bytes)
        #expect(packets.count == 2)
        #expect(packets.first == .senderReport(report, receptionReports: []))
        #expect(report.wallClock(of: 90_000 + 45_000) == .seconds(1_700_000_001))
        #expect(report.wallClock(of: 90_000 - 90_000) == .milliseconds(1_699_999_999_500))
    }

    /// FFmpeg's rtpenc.c: SR (28 bytes) then SDES with the CNAME `Lavf61.7.100`, END and padding
    /// (`(7 + len + 3) / 4` words); its rtpdec.c answers with RR + SDES the same way.
    @Test func ffmpegsSenderAndReceiverReports() throws {
        let name = Array("Lavf61.7.100".utf8)
        let sdes: [UInt8] = [0x81, 202, 0, UInt8((7 + name.count + 3) / 4), 0xDE, 0xAD, 0xBE, 0xEF, 1, UInt8(name.count)] + name + [0, 0] // END, then padding
        let sr: [UInt8] = [0x80, 200, 0, 6, 0xDE, 0xAD, 0xBE, 0xEF, 0xE9, 0x0F, 0x00, 0x00, 0x80, 0, 0, 0, 0, 0, 0x0B, 0xB8, 0, 0, 0, 10, 0, 0, 0x27, 0x10]
        let packets = try RTCPPacket.packets(in: sr + sdes)
        guard case .senderReport(let report, let blocks) = packets.first else { Issue.record("\(packets)"); return }
        #expect(report.ssrc == 0xDEAD_BEEF && report.rtpTimestamp == 3000 && report.packetCount == 10 && report.octetCount == 10_000)
        #expect(report.canonicalName == "Lavf61.7.100" && blocks.isEmpty)
        #expect(report.wallClock(of: 3000) == .seconds(0xE90F_0000 - 2_208_988_800) + .milliseconds(500))
        let block = RTCPReceptionReport(ssrc: 0xDEAD_BEEF, fractionLost: 64, cumulativeLost: -3, extendedHighestSequenceNumber: 0x1_0005,
                                        jitter: 12, lastSenderReport: report.compactNTPTimestamp, delaySinceLastSenderReport: 65_536)
        let rr = RTCPReceiverReport(ssrc: 7, receptionReports: [block], canonicalName: "Lavf61.7.100").bytes
        #expect(Array(rr.prefix(4)) == [0x81, 201, 0, 7] && rr.count == 32 + sdes.count)
        let parsed = try RTCPPacket.packets(in: rr)
        #expect(parsed.first == .receiverReport(ssrc: 7, receptionReports: [block]))
        #expect(parsed.last == .sourceDescription([RTCPSourceDescription(ssrc: 7, items: [.init(type: 1, text: "Lavf61.7.100")])]))
    }

    /// BYE with a reason, an APP packet skipped, and padding on the last packet.
    @Test func goodbyeAppAndPadding() throws {
        let bye: [UInt8] = [0xA1, 203, 0, 3, 0, 0, 0, 9, 3, 0x62, 0x79, 0x65, 0, 0, 0, 4] // P set: 4 bytes of padding
        let app: [UInt8] = [0x80, 204, 0, 2, 0, 0, 0, 9, 0x61, 0x62, 0x63, 0x64]
        #expect(try RTCPPacket.packets(in: app + bye) == [.other(packetType: 204), .goodbye(ssrcs: [9], reason: "bye")])
        #expect(try RTCPPacket.packets(in: [0x81, 203, 0, 1, 0, 0, 0, 9]) == [.goodbye(ssrcs: [9], reason: nil)])
    }

    static let malformed: [MalformedCase] = [
        MalformedCase("three bytes", .truncated, field: "rtcp_header") { _ = try RTCPPacket.packets(in: [0x80, 200, 0]) },
        MalformedCase("version 1", .valueOutOfRange, field: "V") { _ = try RTCPPacket.packets(in: [0x40, 201, 0, 1, 0, 0, 0, 0]) },
        MalformedCase("length past the end", .truncated, field: "length") { _ = try RTCPPacket.packets(in: [0x80, 201, 0, 9, 0, 0, 0, 0]) },
        MalformedCase("padding larger than the packet", .valueOutOfRange, field: "P") { _ = try RTCPPacket.packets(in: [0xA0, 201, 0, 1, 0, 0, 0, 9]) },
        MalformedCase("zero padding", .valueOutOfRange, field: "P") { _ = try RTCPPacket.packets(in: [0xA0, 201, 0, 1, 0, 0, 0, 0]) },
        MalformedCase("an SR without sender info", .truncated, field: "sender_info") { _ = try RTCPPacket.packets(in: [0x80, 200, 0, 1, 0, 0, 0, 0]) },
        MalformedCase("an RR with more blocks than bytes", .truncated, field: "report_block") { _ = try RTCPPacket.packets(in: [0x82, 201, 0, 1, 0, 0, 0, 0]) },
        MalformedCase("an SDES item past the end", .truncated, field: "SDES") { _ = try RTCPPacket.packets(in: [0x81, 202, 0, 2, 0, 0, 0, 1, 1, 9, 0x61, 0]) },
        MalformedCase("an SDES chunk without END", .truncated, field: "SDES") { _ = try RTCPPacket.packets(in: [0x81, 202, 0, 2, 0, 0, 0, 1, 1, 2, 0x61, 0x62]) },
        MalformedCase("a BYE reason past the end", .truncated, field: "reason") { _ = try RTCPPacket.packets(in: [0x81, 203, 0, 2, 0, 0, 0, 1, 9, 0, 0, 0]) },
    ]

    @Test(arguments: malformed) func malformedPacketsAreRefused(_ malformed: MalformedCase) { malformed.expectRejected() }

    /// Every prefix and every one-byte corruption of a real compound parses or throws.
    @Test func corruptionNeverTraps() {
        let bytes = RTCPSenderReport(ssrc: 1, ntpTimestamp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5).bytes
            + RTCPReceiverReport(ssrc: 6, receptionReports: [RTCPReceptionReport(ssrc: 1, fractionLost: 0, cumulativeLost: 0,
                                                                                  extendedHighestSequenceNumber: 9, jitter: 0)]).bytes
        for end in 0...bytes.count { _ = try? RTCPPacket.packets(in: Array(bytes.prefix(end))) }
        for index in bytes.indices {
            for value: UInt8 in [0, 0x1F, 0x80, 0xA0, 0xBF, 0xFF] {
                var copy = bytes
                copy[index] = value
                _ = try? RTCPPacket.packets(in: copy)
            }
        }
    }

    /// Appendix A: a gap of two packets, a wrap of the sequence numbers, loss in the interval
    /// and jitter from arrivals that drift against the timestamps.
    @Test func receptionStatistics() throws {
        var statistics = RTPSourceStatistics()
        #expect(statistics.report() == nil)
        func packet(_ sequence: UInt16, _ timestamp: UInt32, arrival: UInt32) {
            statistics.count(RTPHeader(marker: true, payloadType: 96, sequenceNumber: sequence, timestamp: timestamp, ssrc: 42), arrival: arrival)
        }
        for (index, sequence) in [UInt16(65_533), 65_534, 65_535, 2, 3].enumerated() {
            packet(sequence, UInt32(index) * 3000, arrival: UInt32(index) * 3000 + (index == 4 ? 160 : 0))
        }
        let made = statistics.report(lastSenderReport: 5, delaySinceLastSenderReport: 6)
        let report = try #require(made)
        #expect(report.ssrc == 42 && report.extendedHighestSequenceNumber == 0x1_0003)
        #expect(report.cumulativeLost == 2 && report.fractionLost == UInt8(2 * 256 / 7))
        #expect(report.jitter == 10, "160 / 16")
        #expect(report.lastSenderReport == 5 && report.delaySinceLastSenderReport == 6)
        packet(4, 15_000, arrival: 15_160)
        #expect(statistics.report()?.fractionLost == 0, "no loss since the last report")
        packet(4, 15_000, arrival: 15_160)
        #expect(statistics.report()?.cumulativeLost == 1, "a duplicate counts as received (appendix A.3)")
    }
}
