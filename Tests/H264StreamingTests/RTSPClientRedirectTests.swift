import H264
@testable import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTSPMessages

/// Redirects (RFC 2326 clause 11.3): a `302` with `Location` to DESCRIBE is followed to another
/// server (without the credentials: another host would get them otherwise — here the same
/// host, so they go along), and a redirect that comes back to a URL visited is an error naming
/// the loop.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPClientRedirectTests {
    /// A server whose DESCRIBE answers `302` to `location()`.
    static func redirecting(group: any EventLoopGroup, to location: @escaping @Sendable () -> String) async throws -> ScriptedRTSPServer {
        try await ScriptedRTSPServer(group: group) { request in
            request.method == "DESCRIBE"
                ? RTSPResponse(status: RTSPStatus(code: 302, reasonPhrase: "Found"), cSeq: request.cSeq, headers: [("Location", location())])
                : RTSPResponse(status: .ok, cSeq: request.cSeq, headers: [("Public", "OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN")])
        }
    }

    @Test func aRedirectIsFollowed() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        _ = server.mount("/live", format: StreamingFixtures.format)
        let target = server.url(host: "127.0.0.1", path: "/live")
        let front = try await Self.redirecting(group: group) { target }
        var configuration = RTSPClient.Configuration()
        configuration.transport = .tcp
        let client = try await RTSPClient.open(url: "rtsp://127.0.0.1:\(front.port)/old", group: group, configuration: configuration)
        #expect(client.url == target)
        await client.close()
        await front.close()
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func aRedirectLoopIsAnError() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let second = Locked(0)
        let a = try await Self.redirecting(group: group) { "rtsp://127.0.0.1:\(second.withLock { $0 })/b" }
        let b = try await Self.redirecting(group: group) { "rtsp://127.0.0.1:\(a.port)/a" }
        second.withLock { $0 = b.port }
        let url = "rtsp://127.0.0.1:\(a.port)/a"
        await #expect { try await RTSPClient.open(url: url, group: group) } throws: { error in
            (error as? RTSPClientError)?.code == .redirect && "\(error)".contains("a redirect loop (\(url) → rtsp://127.0.0.1:\(b.port)/b → \(url))")
        }
        await a.close()
        await b.close()
        try await group.shutdownGracefully()
    }
}
