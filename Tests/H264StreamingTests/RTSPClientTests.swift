import H264
@testable import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTP

/// `RTSPClient` against `RTSPServer`, both on loopback (the server's port read from the server):
/// over TCP interleaved and over UDP the access units arrive as they were sent, with their
/// presentation times; `close()` and cancelling the consuming task end the session.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPClientTests {
    @Test(arguments: [RTSPClient.Configuration.Transport.tcp, .udp])
    func playsWhatTheServerSends(transport: RTSPClient.Configuration.Transport) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let (format, frames) = StreamingFixtures.stream
        let live = server.mount("/live", format: format)
        var configuration = RTSPClient.Configuration()
        configuration.transport = transport
        let client = try await RTSPClient.open(url: server.url(host: "127.0.0.1", path: "/live"), group: group,
                                               configuration: configuration)
        #expect(client.formatDescription == format)
        #expect((client.udpPort != nil) == (transport == .udp))
        #expect(live.clientCount == 1 && live.takeKeyframeRequest(), "PLAY joined the stream, waiting for an IDR")

        let sent = Array(frames.drop { !$0.isKeyframe }.prefix(6))
        for frame in sent { live.broadcast(frame) }
        var received: [RTPReceivedFrame] = []
        var times: [Duration] = []
        for await event in client {
            if case .frame(let unit) = event {
                received.append(unit)
                times.append(unit.frame.presentationTime)
            }
            if received.count == sent.count - 1 { break }
        }
        #expect(received.map(\.frame.isKeyframe) == sent.dropLast().map(\.isKeyframe))
        for (unit, frame) in zip(received, sent) where !frame.isKeyframe { #expect(unit.frame.data == frame.avcc) }
        #expect(times.first == .zero && times == times.sorted(), "\(times)")

        await client.close()
        #expect(live.clientCount == 0, "TEARDOWN ended the session before close() returned")
        #expect(client.ending == .closed)
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// Cancelling the task that reads the events sends TEARDOWN too.
    @Test func cancellingTheReaderEndsTheSession() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let live = server.mount("/live", format: StreamingFixtures.format)
        var configuration = RTSPClient.Configuration()
        configuration.udpFallbackDelay = nil // nothing is broadcast: no waiting for a first packet
        let client = try await RTSPClient.open(url: server.url(host: "127.0.0.1", path: "/live"), group: group,
                                               configuration: configuration)
        let reader = Task { for await _ in client {} }
        reader.cancel()
        await reader.value
        await client.close() // returns once the closing the cancellation started is done
        #expect(live.clientCount == 0)
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// A path the server does not have is an error with the server's status.
    @Test func anUnknownPathIsA404() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let url = server.url(host: "127.0.0.1", path: "/nothing")
        await #expect { try await RTSPClient.open(url: url, group: group) } throws: { error in
            (error as? RTSPClientError)?.status == .notFound && "\(error)".hasSuffix("404 Not Found")
        }
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// The keepalive goes at half the session's timeout: the `timeout` of `Session`, 60 s without one.
    @Test(arguments: [("12345678;timeout=30", 30), ("12345678", 60), ("12345678; timeout = 8", 8), ("1;timeout=x", 60), (nil, 60)])
    func theSessionTimeoutIsRead(header: String?, seconds: Int) {
        #expect(RTSPClient.sessionTimeout(in: header) == .seconds(seconds))
    }
}
