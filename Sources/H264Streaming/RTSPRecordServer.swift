public import Logging
public import NIOCore

/// An ``RTSPServer`` with one record path: publishers push their H.264 stream to
/// `rtsp://HOST:PORT/PATH` with ANNOUNCE (the SDP), SETUP with `mode=record` (RTP interleaved
/// in TCP, or over UDP) and RECORD — as FFmpeg's `-f rtsp` and GStreamer's `rtspclientsink`
/// do. Each publisher that starts recording comes out of ``publishers`` as an
/// ``RTSPPublisher``: an `AsyncSequence` of its depacketized events.
///
/// A convenience over ``RTSPServer/mountRecording(_:authentication:)``: one publisher records at a time (an
/// ANNOUNCE while another connection holds the path gets 453 Not Enough Bandwidth).
public final class RTSPRecordServer: Sendable {
    /// Timeouts and receiving settings: those of ``RTSPServer``.
    public typealias Configuration = RTSPServer.Configuration

    /// The path publishers push to (`/live`), as given to ``start(host:port:path:group:configuration:logger:)``.
    public let path: String
    /// The publishers, each as it starts recording; ends at ``shutdown()``.
    public let publishers: AsyncStream<RTSPPublisher>
    /// The server underneath, with ``path`` mounted for recording.
    public let server: RTSPServer

    private init(path: String, publishers: AsyncStream<RTSPPublisher>, server: RTSPServer) {
        self.path = path
        self.publishers = publishers
        self.server = server
    }

    /// The address the server listens on (with the port the system chose for port 0).
    public var localAddress: SocketAddress? { server.localAddress }

    /// `rtsp://HOST:PORT/PATH` with the bound port, `host` as clients should name it.
    ///
    /// - Parameter host: the host name or address publishers connect to.
    public func url(host: String) -> String {
        server.url(host: host, path: path)
    }

    /// Starts listening on `host`:`port` (0: a free port) for publishers to `path`.
    ///
    /// - Parameters:
    ///   - host: the address to listen on (`127.0.0.1`, `0.0.0.0`, `::1`).
    ///   - port: the TCP port; 0 takes a free one (see ``localAddress``).
    ///   - path: the path publishers push to (`/live`; `/` for the root).
    ///   - group: the event loop group; the server and its connections use one of its loops.
    ///   - configuration: timeouts and receiving settings.
    ///   - logger: gets a message for each request refused, session set up, recording started
    ///     and ended.
    /// - Throws: the error of binding the address.
    public static func start(host: String, port: Int, path: String, group: any EventLoopGroup,
                             configuration: Configuration = .init(),
                             logger: Logger = .streamingSilent) async throws -> RTSPRecordServer {
        let server = try await RTSPServer.start(host: host, port: port, group: group, configuration: configuration, logger: logger)
        let path = RTSPMounts.normalized(path)
        return RTSPRecordServer(path: path, publishers: server.mountRecording(path), server: server)
    }

    /// Stops listening, ends the current recording (``RTSPPublisher/Ending/stopped``), closes
    /// every connection and ends ``publishers``; returns when all that is done.
    public func shutdown() async {
        await server.shutdown()
    }

    /// Starts listening at `url` — `rtsp://HOST:PORT/PATH`, or `rtsps://` when `configuration`
    /// has a TLS identity (port 0: a free one; no path: `/`) — as `h264 receive --listen` and
    /// `h264 relay --listen` are told.
    ///
    /// - Parameters:
    ///   - url: where publishers push to.
    ///   - group: the event loop group.
    ///   - configuration: timeouts, receiving settings, authentication, TLS.
    ///   - logger: as for ``start(host:port:path:group:configuration:logger:)``.
    /// - Returns: the server and its URL with the bound port.
    /// - Throws: ``RTSPClientError`` (code `badURL`) for a URL that is not `rtsp://` or
    ///   `rtsps://`, or whose scheme disagrees with the configuration's TLS; the error of
    ///   binding the address.
    public static func start(listeningAt url: String, group: any EventLoopGroup, configuration: Configuration = .init(),
                             logger: Logger = .streamingSilent) async throws -> (server: RTSPRecordServer, url: String) {
        guard RTSPURI.isAbsolute(url) else {
            throw RTSPClientError(.badURL, "not an rtsp:// or rtsps:// URL to listen on: \(url)")
        }
        guard RTSPURI.isSecure(url) == (configuration.tls != nil) else {
            throw RTSPClientError(.badURL, "rtsps:// goes with a TLS certificate and key (rtsp:// without)")
        }
        let (host, port) = try RTSPURI.hostAndPort(of: url, allowingPortZero: true)
        let path = String(RTSPURI.path(of: url).prefix { $0 != "?" })
        let server = try await start(host: host, port: port, path: path.isEmpty ? "/" : path, group: group,
                                     configuration: configuration, logger: logger)
        return (server, server.url(host: host))
    }

    /// The first publisher that starts recording; nil once the server was shut down without one.
    public func firstPublisher() async -> RTSPPublisher? {
        var iterator = publishers.makeAsyncIterator()
        return await iterator.next()
    }
}
