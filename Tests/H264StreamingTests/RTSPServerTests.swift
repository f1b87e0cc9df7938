import H264
import H264Streaming
import NIOCore
import NIOPosix
import Testing

/// The RTSP play server on real loopback sockets: bound on port 0 (the port read from the
/// server, not from a log), two mount paths, a viewer playing one over TCP interleaved, and
/// shutdown ending its session.
@Suite struct RTSPServerTests {
    @Test func aViewerPlaysAMountedPathAndShutdownEndsItsSession() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let port = try #require(server.localAddress?.port)
        #expect(port > 0)
        let (format, frames) = StreamingFixtures.stream
        let cam1 = server.mount("/cam1", format: format)
        let cam2 = server.mount("cam2/", format: format)
        #expect(server.url(host: "127.0.0.1", path: "/cam1") == "rtsp://127.0.0.1:\(port)/cam1")

        let viewer = try await RTSPTestConnection(port: port, group: group)
        let base = "rtsp://127.0.0.1:\(port)"
        #expect(try await viewer.request("DESCRIBE", base + "/nothing").status == .notFound)
        let described = try await viewer.request("DESCRIBE", base + "/cam1", headers: [("Accept", "application/sdp")])
        #expect(described.status == .ok)
        #expect(described.header("Content-Base") == base + "/cam1/")
        let sdp = try SessionDescription(parsing: String(decoding: described.body, as: UTF8.self))
        #expect(try sdp.formatDescription() == format)

        let setup = try await viewer.request("SETUP", base + "/cam1/track1",
                                             headers: [("Transport", "RTP/AVP/TCP;unicast;interleaved=0-1")])
        #expect(setup.status == .ok)
        let session = try #require(setup.header("Session")?.split(separator: ";").first.map(String.init))
        let play = try await viewer.request("PLAY", base + "/cam1/", headers: [("Session", session)])
        #expect(play.status == .ok)
        // The answer went before the viewer joined, in the same turn of the loop: it waits for an IDR.
        #expect(cam1.clientCount == 1 && cam2.clientCount == 0)
        #expect(cam1.takeKeyframeRequest())

        let sent = Array(frames.drop { !$0.isKeyframe }.prefix(10))
        for frame in sent { cam1.broadcast(frame) }
        var depacketizer = RTPDepacketizer()
        var received: [AccessUnit] = []
        while received.count < sent.count - 1, let message = try await viewer.next() {
            guard case .interleavedFrame(0, let packet) = message else { continue }
            depacketizer.append(packet: packet)
            while let event = depacketizer.next() {
                if case .accessUnit(let unit) = event { received.append(unit.accessUnit) }
            }
        }
        // The last access unit is complete once a later packet (or the end) comes: the first ones are checked.
        #expect(received.map(\.isIDR) == sent.dropLast().map(\.isKeyframe))
        for (unit, frame) in zip(received, sent) where !frame.isKeyframe {
            #expect(unit.data == frame.avcc, "an access unit changed on the way")
        }
        #expect(depacketizer.lostPacketCount == 0)

        await server.shutdown()
        #expect(cam1.clientCount == 0, "the session left its stream")
        var closed = false
        while !closed { closed = try await viewer.next().map { _ in false } ?? true }
        await viewer.close()
        try await group.shutdownGracefully()
    }
}
