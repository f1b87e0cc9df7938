import H264
import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTP

/// The RTSP record server on real loopback sockets: bound on port 0 (the port read from the
/// server), a publisher announcing, recording over TCP interleaved and tearing down, seen by the
/// program as an `RTSPPublisher` whose access units are the ones sent.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPRecordServerTests {
    @Test func aPublisherRecordsAndTearsDown() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPRecordServer.start(host: "127.0.0.1", port: 0, path: "/live", group: group)
        let port = try #require(server.localAddress?.port)
        let url = server.url(host: "127.0.0.1")
        #expect(url == "rtsp://127.0.0.1:\(port)/live")
        let (format, frames) = StreamingFixtures.stream
        let sent = Array(frames.drop { !$0.isKeyframe }.prefix(12))

        let publishing = Task {
            let connection = try await RTSPTestConnection(port: port, group: group)
            let sdp = SessionDescription(formatDescription: format, address: "127.0.0.1", port: 0).text + "a=control:streamid=0\r\n"
            var statuses = [try await connection.request("ANNOUNCE", url, headers: [("Content-Type", "application/sdp"), ("Content-Length", String(sdp.utf8.count))],
                                                         body: Array(sdp.utf8)).status]
            let setup = try await connection.request("SETUP", url + "/streamid=0",
                                                     headers: [("Transport", "RTP/AVP/TCP;unicast;interleaved=0-1;mode=record")])
            statuses.append(setup.status)
            let session = String(setup.header("Session")?.split(separator: ";").first ?? "")
            statuses.append(try await connection.request("RECORD", url, headers: [("Session", session)]).status)
            try await connection.record(sent, format: format)
            statuses.append(try await connection.request("TEARDOWN", url, headers: [("Session", session)]).status)
            await connection.close()
            return statuses
        }

        var publishers = server.publishers.makeAsyncIterator()
        let publisher = try #require(await publishers.next())
        #expect(publisher.formatDescription == format)
        var received: [CompressedFrame] = []
        for await event in publisher {
            if case .frame(let unit) = event { received.append(unit.frame) }
        }
        #expect(try await publishing.value == [.ok, .ok, .ok, .ok])
        #expect(publisher.ending == .teardown)
        #expect(received.map(\.isKeyframe) == sent.map(\.isKeyframe), "the depacketizer was flushed at the end")
        for (unit, frame) in zip(received, sent) where !frame.isKeyframe { #expect(unit.data == frame.avcc) }
        #expect(publisher.statistics.lostPackets == 0 && publisher.statistics.packets > sent.count)

        await server.shutdown()
        #expect(await publishers.next() == nil, "the sequence of publishers ends at shutdown")
        try await group.shutdownGracefully()
    }
}
