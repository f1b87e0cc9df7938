import Foundation
import H264
import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTP

/// The RTSP play server on real loopback sockets: bound on port 0 (the port read from the
/// server, not from a log), two mount paths, a viewer playing one over TCP interleaved, and
/// shutdown ending its session.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPServerTests {
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

        // The server told what happened to the session, in order, and its events ended with shutdown.
        var events: [ServerEvent] = []
        for await event in server.events { events.append(event) }
        #expect(events.count == 3, "\(events)")
        guard case .sessionSetUp(session, "/cam1", let address, let transport)? = events.first else {
            Issue.record("no session set up first: \(events)")
            return
        }
        #expect(address.contains("127.0.0.1") && transport.hasPrefix("RTP/AVP/TCP;unicast;interleaved=0-1;ssrc="))
        #expect(events.dropFirst().first == .sessionPlaying(session: session, client: 1))
        #expect(events.last == .sessionEnded(session: session, reason: "connection closed"), "shutdown closed it")
        // The broadcaster's own events: client 1 joined and left.
        cam1.finishEvents()
        var viewerEvents: [String] = []
        for await event in cam1.events { viewerEvents.append(event.name) }
        #expect(viewerEvents == ["viewer-joined", "viewer-left"])
    }

    /// Each event is one flat JSON object whose `event` key names it.
    @Test func eventsEncodeAsFlatJSON() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let ended = try encoder.encode(ServerEvent.sessionEnded(session: "12AB", reason: "teardown"))
        #expect(String(decoding: ended, as: UTF8.self) == #"{"event":"session-ended","reason":"teardown","session":"12AB"}"#)
        let listening = try encoder.encode(ServerEvent.listening(url: "rtsp://127.0.0.1:8554/live"))
        #expect(String(decoding: listening, as: UTF8.self) == #"{"event":"listening","url":"rtsp://127.0.0.1:8554/live"}"#)
    }
}
