import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing
import RTP
import RTSPMessages

/// The client's RTCP on an `EmbeddedChannel` and the loop's own clock: a receiver report on the
/// RTCP interleaved channel every 5 s with the counts of what arrived (a lost packet included),
/// and the access units' wall-clock time from the server's sender report.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPClientRTCPTests {
    /// `data` as an interleaved frame on `channel`.
    static func interleaved(_ channel: UInt8, _ data: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: [UInt8(ascii: "$"), channel, UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data)
    }

    /// The compound RTCP packets the client wrote on channel 1.
    static func reports(from client: EmbeddedRTSPClient) throws -> [[RTCPPacket]] {
        var reader = RTSPMessageReader()
        while let buffer = try client.channel.readOutbound(as: ByteBuffer.self) { reader.append(buffer.readableBytesView) }
        var reports: [[RTCPPacket]] = []
        while let message = try reader.next() {
            if case .interleavedFrame(1, let payload) = message { reports.append(try RTCPPacket.packets(in: Array(payload))) }
        }
        return reports
    }

    @Test func receiverReportsEveryFiveSecondsAndWallClockAfterTheSenderReport() async throws {
        let client = try EmbeddedRTSPClient()
        client.handler.rtpChannel = 0
        client.handler.rtcpChannel = 1
        client.handler.play(with: VideoRTPDepacketizer(h264: RTPDepacketizer()))
        client.handler.startReceiverReports(every: .seconds(5))
        var packetizer = RTPPacketizer(configuration: .init(ssrc: 0xCAFE, initialSequenceNumber: 100, initialTimestamp: 0))
        let frames = Array(StreamingFixtures.stream.frames.drop { !$0.isKeyframe }.prefix(6))
        var packets: [[UInt8]] = []
        for (index, frame) in frames.enumerated() {
            packets += try packetizer.packets(avcc: frame.avcc, presentationTime: .milliseconds(40 * index),
                                              formatDescription: frame.isKeyframe ? frame.formatDescription : nil)
        }
        // The first two access units, then an SR (RTP timestamp 0 at a known NTP time), then the
        // rest without one packet of the last access unit.
        let secondEnd = packets.firstIndex { (try? RTPHeader.parse($0).header.timestamp) == packetizer.timestamp(for: .milliseconds(80)) }!
        for packet in packets[..<secondEnd] { try client.channel.writeInbound(Self.interleaved(0, packet)) }
        #expect(try Self.reports(from: client).isEmpty, "none before 5 s")
        let ntp = RTCPSenderReport.ntpTimestamp(unixSeconds: 1_700_000_000, nanoseconds: 0)
        let sr = RTCPSenderReport(ssrc: 0xCAFE, ntpTimestamp: ntp, rtpTimestamp: 0, packetCount: 0, octetCount: 0, canonicalName: "cam")
        try client.channel.writeInbound(Self.interleaved(1, sr.bytes))
        #expect(client.state.withLock { $0.lastSenderReport } == sr)
        let lost = secondEnd + 1
        for packet in packets[secondEnd...].enumerated().filter({ $0.offset + secondEnd != lost }).map(\.element) {
            try client.channel.writeInbound(Self.interleaved(0, packet))
        }
        client.loop.advanceTime(by: .seconds(5))
        let first = try Self.reports(from: client)
        #expect(first.count == 1)
        guard case .receiverReport(_, let blocks) = first.first?.first, let block = blocks.first else {
            Issue.record("\(first)")
            return
        }
        #expect(block.ssrc == 0xCAFE && block.extendedHighestSequenceNumber == UInt32(100 + packets.count - 1))
        #expect(block.cumulativeLost == 1 && block.fractionLost == UInt8(256 / packets.count))
        #expect(block.lastSenderReport == sr.compactNTPTimestamp && block.delaySinceLastSenderReport == 5 * 65_536)
        #expect(first.first?.last.map { if case .sourceDescription = $0 { true } else { false } } == true, "RR + SDES")
        client.loop.advanceTime(by: .seconds(5))
        #expect(try Self.reports(from: client).count == 1, "one more 5 s later")

        client.handler.end(.closed)
        var units: [RTPReceivedFrame] = []
        for await case .frame(let unit) in client.events { units.append(unit) }
        #expect(units.count >= 4, "\(units.map(\.timestamp)) of \(packets.count) packets")
        #expect(units.prefix(2).allSatisfy { $0.wallClock == nil }, "before the SR")
        for unit in units.dropFirst(2) {
            #expect(unit.wallClock == .seconds(1_700_000_000) + .nanoseconds(Int64(unit.timestamp) * 1_000_000_000 / 90_000))
        }
    }
}
