import MediaCore
public import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An HTTP/1.1 server of live HLS / Low-Latency HLS streams: each mount path (`/live`, `/cam1`,
/// …) serves an ``HLSLiveStream`` at `http://HOST:PORT/PATH/index.m3u8`, its init segment,
/// segments and parts beside it (`/live/init-0.mp4`, `/live/seg-3.m4s`, `/live/part-3-1.m4s`,
/// the names its playlist gives).
///
/// ```swift
/// let server = try await HLSServer.start(host: "0.0.0.0", port: 8888, group: group)
/// let stream = HLSLiveStream()
/// server.mount(path: "/live", stream: stream)
/// let task = broadcaster.attach(HLSSink(stream))
/// ```
///
/// GET and HEAD are served, OPTIONS answers a CORS preflight (204), other methods get 405;
/// every answer carries `Access-Control-Allow-Origin: *` (and the allowed methods, headers and
/// exposed headers), so a page of another origin can play the stream. A playlist is
/// `application/vnd.apple.mpegurl` with `Cache-Control: no-cache`; segments, parts and init
/// segments are cached for ``Configuration/resourceMaxAge`` seconds (`immutable`). A blocking
/// playlist reload (`_HLS_msn`, `_HLS_part`) or a request for the part the preload hint names
/// is held until the stream has it (see ``HLSLiveStream`` for the bounds: 503 past them); a
/// malformed query or one more than two segments ahead gets 400, a path nothing is mounted at
/// or a resource the stream does not have 404.
///
/// Connections are kept alive (HTTP/1.1, or `Connection: keep-alive`) and may pipeline
/// requests (answered in order). Bounded: request headers over
/// ``Configuration/maximumHeaderSize`` get 400, bodies over ``Configuration/maximumBodySize``
/// 413, and either closes the connection; a connection that has not sent a whole request, nor
/// waits for an answer, for ``Configuration/idleTimeout`` closes; a client that does not read
/// its answers is not read from until it does. With ``Configuration/tls`` the server speaks HTTPS and
/// offers HTTP/2 by ALPN: each request of an HTTP/2 connection is answered on its stream by the
/// same rules (at most 100 streams at once, NIOHTTP2's default), and the connection closes once
/// nothing has been read or written on it for ``Configuration/idleTimeout``. The server never
/// prints.
public final class HLSServer: Sendable {
    /// The limits and caching of the server's connections.
    public struct Configuration: Sendable {
        /// A connection with no request in flight (none being read or waiting for its stream)
        /// for this long closes.
        public var idleTimeout: Duration = .seconds(30)
        /// The most bytes of a request's header fields (names and values together); more: 400
        /// and the connection closes.
        public var maximumHeaderSize = 16 * 1024
        /// The most header fields of a request.
        public var maximumHeaderCount = 100
        /// The most bytes of a request's body (HLS requests have none); more: 413 and the
        /// connection closes.
        public var maximumBodySize = 1024
        /// The seconds a segment, part or init segment may be cached (`Cache-Control: public,
        /// max-age=N, immutable`).
        public var resourceMaxAge = 3600
        /// The certificate and key of HTTPS: with them, every connection speaks TLS and offers
        /// HTTP/2 by ALPN (`h2`, then `http/1.1`): a client that takes `h2` gets each request
        /// on a stream of its own, one connection for all; others HTTP/1.1. Nil: plain HTTP/1.1.
        public var tls: RTSPTLSIdentity?

        /// The defaults: 30 s idle timeout, 16 KiB of headers, 1 KiB of body, resources cached
        /// for an hour, no TLS.
        public init() {}
    }

    /// The listening channel.
    private let channel: any Channel
    /// The open connections, by channel.
    private let connections: Locked<[ObjectIdentifier: any Channel]>
    /// The streams, by normalized mount path.
    private let streams: Locked<[String: HLSLiveStream]>

    private init(channel: any Channel, connections: Locked<[ObjectIdentifier: any Channel]>,
                 streams: Locked<[String: HLSLiveStream]>) {
        self.channel = channel
        self.connections = connections
        self.streams = streams
    }

    /// The address the server listens on (with the port the system chose for port 0).
    public var localAddress: SocketAddress? { channel.localAddress }

    /// The port the server listens on (the one the system chose for port 0).
    public var port: Int { channel.localAddress?.port ?? 0 }

    /// How many HTTP connections are open (0 once ``shutdown()`` has returned).
    public var connectionCount: Int { connections.withLock { $0.count } }

    /// Starts listening on `host`:`port` (0: a free port; `::1` for IPv6) with nothing mounted.
    ///
    /// - Parameters:
    ///   - host: the address to listen on (`127.0.0.1`, `0.0.0.0`, `::1`).
    ///   - port: the TCP port; 0 takes a free one (see ``port``).
    ///   - group: the server takes one of its event loops for the listener and its connections.
    ///   - configuration: the connections' limits and the resources' caching.
    /// - Returns: the listening server.
    /// - Throws: the error of binding the address.
    public static func start(host: String, port: Int, group: any EventLoopGroup,
                             configuration: Configuration = .init()) async throws -> HLSServer {
        let registry = Locked([ObjectIdentifier: any Channel]())
        let streams = Locked([String: HLSLiveStream]())
        let limits = {
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderListSize = configuration.maximumHeaderSize
            limits.maxHeaderFieldSize = configuration.maximumHeaderSize
            limits.maxHeaderFieldCount = configuration.maximumHeaderCount
            return limits
        }()
        let tls = try configuration.tls?.context(applicationProtocols: ["h2", "http/1.1"])
        let makeHandler = { @Sendable in
            HLSHTTPHandler(streams: { path in streams.withLock { $0[path] } }, configuration: configuration)
        }
        let channel = try await ServerBootstrap(group: group.next())
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let key = ObjectIdentifier(channel)
                registry.withLock { $0[key] = channel }
                channel.closeFuture.whenComplete { _ in _ = registry.withLock { $0.removeValue(forKey: key) } }
                do {
                    // A client that does not read its answers is not read from either (NIO would
                    // otherwise queue the answers to its pipelined requests without bound).
                    try channel.pipeline.syncOperations.addHandler(BackPressureHandler())
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                /// HTTP/1.1 on `connection`.
                @Sendable func http1(_ connection: any Channel) -> EventLoopFuture<Void> {
                    connection.eventLoop.makeCompletedFuture {
                        try connection.pipeline.syncOperations.configureHTTPServerPipeline(
                            withPipeliningAssistance: true, withErrorHandling: true, withOutboundHeaderValidation: true,
                            withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
                        try connection.pipeline.syncOperations.addHandler(makeHandler())
                    }
                }
                guard let tls else { return http1(channel) }
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.configureHTTP2SecureUpgrade(h2ChannelConfigurator: { connection in
                    // Each request on a stream channel of its own, as HTTP/1 parts for the same handler.
                    connection.configureHTTP2Pipeline(mode: .server, inboundStreamInitializer: { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            try stream.pipeline.syncOperations.addHandler(makeHandler())
                        }
                    }).flatMapThrowing { _ in
                        // The connection's own idle timeout (its streams' requests wait less long, see HLSLiveStream.Limits).
                        try connection.pipeline.syncOperations.addHandler(HLSIdleConnectionCloser(), position: .first)
                        try connection.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: TimeAmount(configuration.idleTimeout)),
                                                                          position: .first)
                    }
                }, http1ChannelConfigurator: http1)
            }
            .bind(host: host, port: port).get()
        return HLSServer(channel: channel, connections: registry, streams: streams)
    }

    /// Serves `stream` at `path` (`/live`: `/live/index.m3u8` and its resources; a leading `/`
    /// is added, a trailing one dropped). Mounting a path again replaces its stream for the
    /// requests from then on.
    ///
    /// - Parameters:
    ///   - path: the mount path.
    ///   - stream: the stream served there (one stream may be mounted at several paths).
    public func mount(path: String, stream: HLSLiveStream) {
        streams.withLock { $0[RTSPMounts.normalized(path)] = stream }
    }

    /// Stops serving `path`: new requests for it get 404 (those waiting go on waiting for
    /// their stream).
    ///
    /// - Parameter path: the mount path.
    public func unmount(path: String) {
        _ = streams.withLock { $0.removeValue(forKey: RTSPMounts.normalized(path)) }
    }

    /// `http://HOST:PORT/PATH/index.m3u8` for `path` on `host` as clients should name it (the
    /// bound port).
    ///
    /// - Parameters:
    ///   - host: the host name or address clients connect to.
    ///   - path: the mount path.
    /// - Returns: the playlist's URL.
    public func url(host: String, path: String) -> String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let mount = RTSPMounts.normalized(path)
        return "http://\(shownHost):\(port)\(mount == "/" ? "" : mount)/\(HLSHTTPExchange.playlistName)"
    }

    /// Stops listening and closes every connection (their waiting requests stop waiting);
    /// returns when that is done.
    public func shutdown() async {
        try? await channel.close()
        for connection in connections.withLock({ Array($0.values) }) {
            try? await connection.close()
        }
    }
}

/// Closes an HTTP/2 connection when its `IdleStateHandler` says nothing was read or written for
/// the idle timeout.
private final class HLSIdleConnectionCloser: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent { context.close(promise: nil) } else { context.fireUserInboundEventTriggered(event) }
    }
}
