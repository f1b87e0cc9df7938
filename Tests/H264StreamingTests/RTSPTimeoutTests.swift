import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing

/// The timeouts of an RTSP server connection on `EmbeddedChannel`, whose event loop's clock the
/// test moves: no waiting for seconds to pass.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPTimeoutTests {
    /// A play connection with the given timeouts, active.
    static func connection(requestTimeout: Duration = .seconds(10), sessionTimeout: Duration = .seconds(60)) throws -> EmbeddedChannel {
        var configuration = RTSPServer.Configuration()
        configuration.requestTimeout = requestTimeout
        configuration.sessionTimeout = sessionTimeout
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            RTSPConnectionHandler(mounts: RTSPMounts(), configuration: configuration, logger: .streamingSilent))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 554)).wait()
        return channel
    }

    /// The first line of what the server wrote, if anything.
    static func statusLine(_ channel: EmbeddedChannel) throws -> String? {
        guard let buffer = try channel.readOutbound(as: ByteBuffer.self) else { return nil }
        return String(decoding: buffer.readableBytesView, as: UTF8.self).split(separator: "\r\n").first.map(String.init)
    }

    /// A request begun and not finished gets 408 once the request timeout has passed, then the
    /// connection closes; not a check earlier.
    @Test func anUnfinishedRequestGets408() throws {
        let channel = try Self.connection(requestTimeout: .seconds(10))
        try channel.writeInbound(ByteBuffer(string: "OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(try Self.statusLine(channel) == nil && channel.isActive, "not yet")
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try Self.statusLine(channel) == "RTSP/1.0 408 Request Timeout")
        #expect(!channel.isActive, "closed after 408")
    }

    /// A connection that says nothing for the session timeout closes; one that keeps talking
    /// (OPTIONS as a keepalive) stays.
    @Test func aSilentConnectionClosesAtTheSessionTimeout() throws {
        let talking = try Self.connection(sessionTimeout: .seconds(5))
        let silent = try Self.connection(sessionTimeout: .seconds(5))
        for second in 1...8 {
            try talking.writeInbound(ByteBuffer(string: "OPTIONS * RTSP/1.0\r\nCSeq: \(second)\r\n\r\n"))
            #expect(try Self.statusLine(talking) == "RTSP/1.0 200 OK")
            talking.embeddedEventLoop.advanceTime(by: .seconds(1))
            silent.embeddedEventLoop.advanceTime(by: .seconds(1))
        }
        #expect(talking.isActive)
        #expect(!silent.isActive, "nothing heard for 5 s")
        _ = try? talking.finish()
    }
}
