import H264Streaming
import Logging
import NIOPosix

/// An `RTMPIngestServer` listening on `url` (`rtmp://HOST:PORT/APP/KEY`, port 0: a free one)
/// for that application and key only, and its URL with the bound port — `receive --listen` and
/// `relay --listen` alike.
func startRTMPIngest(_ url: String, group: MultiThreadedEventLoopGroup, logger: Logger) async throws -> (RTMPIngestServer, String) {
    let target = try RTMPURL(url, allowingPortZero: true)
    guard !target.isSecure else { throw CLIError("--listen takes rtmp:// (rtmps:// is for publishing and playing)") }
    let server = try await listening("RTMP on \(target.host):\(target.port)") {
        try await RTMPIngestServer.start(host: target.host, port: target.port, group: group, app: target.app,
                                         streamKey: target.streamKey, logger: logger)
    }
    return (server, server.url(host: target.host, app: target.app, streamKey: target.streamKey))
}

extension RTMPIngestServer {
    /// The first publisher; nil when a stop signal (which shuts the server down) came first.
    func firstPublisher() async throws -> RTMPIncomingStream? {
        var publishers = publishers.makeAsyncIterator()
        return try await StopSignal.catching(onStop: shutdown, { await publishers.next() })
    }
}
