import H264
@testable import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing

/// Reconnection: the server shut down and started again on the same port, the client (with
/// ``RTSPClient/Configuration/reconnect``) reports the disconnection, connects again, reports
/// the reconnection and resumes at an IDR (announced with the gap); its events go on across it.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPClientReconnectTests {
    @Test(arguments: [RTSPClient.Configuration.Transport.tcp, .udp])
    func resumesAfterTheServerRestarts(transport: RTSPClient.Configuration.Transport) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let port = try #require(server.localAddress?.port)
        let live = Locked(server.mount("/live", format: StreamingFixtures.format))
        let frames = StreamingFixtures.stream.frames
        // The camera: frames from the live mount of the server of the moment, every 10 ms.
        let camera = Task {
            var index = 0
            while !Task.isCancelled {
                live.withLock { $0 }.broadcast(frames[index % frames.count])
                index += 1
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        var configuration = RTSPClient.Configuration()
        configuration.transport = transport
        configuration.reconnect = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        let client = try await RTSPClient.open(url: "rtsp://127.0.0.1:\(port)/live", group: group, configuration: configuration)
        var kinds: [String] = []
        var afterReconnection: [Bool] = []
        for await event in client {
            switch event {
            case .frame(let unit):
                if kinds.last == "resumed" || !afterReconnection.isEmpty { afterReconnection.append(unit.frame.isKeyframe) }
                if kinds.last != "unit" && kinds.last != "shutdown" { kinds.append("unit") } // units in flight at the shutdown aside
                if kinds == ["unit"] {
                    kinds.append("shutdown")
                    await server.shutdown()
                    server = try await RTSPServer.start(host: "127.0.0.1", port: port, group: group)
                    live.withLock { $0 = server.mount("/live", format: StreamingFixtures.format) }
                }
            case .disconnected: kinds.append("disconnected")
            case .reconnected(let reconnection):
                #expect(reconnection.attempts >= 1)
                kinds.append("reconnected")
            case .resumed(let gap):
                #expect(gap > .zero && gap < .seconds(10))
                kinds.append("resumed")
            default: break
            }
            if afterReconnection.count >= 3 { break }
        }
        #expect(kinds == ["unit", "shutdown", "disconnected", "reconnected", "resumed", "unit"])
        #expect(afterReconnection.first == true, "resumes at an IDR")
        #expect(client.disconnections == 1)
        camera.cancel()
        await client.close()
        #expect(client.ending == .closed)
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
