import H264
import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTSPMessages

/// A UDP viewer that only sends RTCP receiver reports (as VLC does) keeps its RTSP session
/// alive; once the reports stop, the session times out.
@Suite(.timeLimit(.minutes(1)), .ownThread) struct RTSPServerKeepaliveTests {
    @Test func receiverReportsKeepAUDPViewersSessionAlive() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = RTSPServer.Configuration()
        configuration.sessionTimeout = .seconds(4)
        configuration.checkInterval = .milliseconds(50)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
        let port = try #require(server.localAddress?.port)
        _ = server.mount("/live", format: StreamingFixtures.stream.format)
        let ended = Task { () -> String? in
            for await event in server.events {
                if case .sessionEnded(_, let reason) = event { return reason }
            }
            return nil
        }

        let socket = try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let clientPort = try #require(socket.localAddress?.port)
        let viewer = try await RTSPTestConnection(port: port, group: group)
        let url = server.url(host: "127.0.0.1", path: "/live")
        let setup = try await viewer.request("SETUP", url + "/track1",
                                             headers: [("Transport", "RTP/AVP;unicast;client_port=\(clientPort)-\(clientPort + 1)")])
        #expect(setup.status == .ok)
        let transport = try #require(try RTSPTransport.parseList(setup.header("Transport") ?? "").first)
        let serverRTCP = try SocketAddress(ipAddress: "127.0.0.1", port: try #require(transport.serverPorts?.upperBound))
        let session = String(setup.header("Session")?.split(separator: ";").first ?? "")

        // Receiver reports from SETUP on, one every 200 ms, sent from the event loop (the
        // test's own task may wait seconds for a thread while other tests block theirs); then
        // 8 s, twice the session timeout, with nothing on the RTSP connection after PLAY.
        let receiverReport: [UInt8] = [0x80, 201, 0, 1, 0x12, 0x34, 0x56, 0x78]
        let reports = socket.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(200)) { _ in
            socket.writeAndFlush(AddressedEnvelope(remoteAddress: serverRTCP, data: ByteBuffer(bytes: receiverReport)), promise: nil)
        }
        #expect(try await viewer.request("PLAY", url, headers: [("Session", session)]).status == .ok)
        try await Task.sleep(for: .seconds(8))
        #expect(server.connectionCount == 1, "the session lived while the reports came")
        reports.cancel()
        #expect(await ended.value == "timed out", "and timed out once they stopped")

        await viewer.close()
        try await socket.close()
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
