public import H264
public import Logging
public import NIOCore
import NIOPosix

/// An RTSP server (RFC 2326) that plays live streams: each mount path (`/live`, `/cam1`, …)
/// is a ``Broadcaster`` with its format, at `rtsp://HOST:PORT/PATH`, one RTP stream (RFC 6184,
/// packetization-mode 1) per viewer, interleaved in the viewer's RTSP connection
/// (`RTP/AVP/TCP`) or over UDP unicast (`RTP/AVP;unicast;client_port=A-B`).
///
/// Viewers are clients of the path's broadcaster: PLAY joins it (so the viewer gets SPS, PPS
/// and an IDR forced for it at once), PAUSE, TEARDOWN or a closed connection leaves it, and a
/// viewer that stops reading is skipped to the next IDR without slowing the others. Each
/// viewer's connection packetizes the AVCC access units it is given, with its own SSRC and
/// sequence numbers.
///
/// The request parsing and response writing are the `H264` module's (`RTSPMessageReader`,
/// `RTSPResponse`, `RTSPTransport`); this type binds them to SwiftNIO.
public final class RTSPServer: Sendable {
    /// Timeouts and packet size of the server's connections.
    public struct Configuration: Sendable {
        /// A session without any request or RTCP for this long ends (advertised in `Session`).
        public var sessionTimeout: Duration = .seconds(60)
        /// A request that has begun must be complete within this time (else 408 and the
        /// connection closes).
        public var requestTimeout: Duration = .seconds(10)
        /// How often each connection checks its timeouts (and sends an RTCP sender report when
        /// one is due, every 5 s).
        public var checkInterval: Duration = .seconds(1)
        /// The largest RTP packet, counted as for UDP over IPv4 (RTP packets interleaved in TCP
        /// need no IP fragmentation, but players' buffers expect the usual sizes).
        public var maximumTransmissionUnit = 1400
        /// The kernel send buffer of each connection (`SO_SNDBUF`; nil: the system's).
        public var sendBufferSize: Int?

        /// The defaults: 60 s sessions, 10 s requests, 1400-byte packets.
        public init() {}
    }

    /// The listening channel.
    private let channel: any Channel
    /// The open RTSP connections, by channel.
    private let connections: Locked<[ObjectIdentifier: any Channel]>
    private let mounts: RTSPMounts

    private init(channel: any Channel, connections: Locked<[ObjectIdentifier: any Channel]>, mounts: RTSPMounts) {
        self.channel = channel
        self.connections = connections
        self.mounts = mounts
    }

    /// The address the server listens on (with the port the system chose for port 0).
    public var localAddress: SocketAddress? { channel.localAddress }

    /// Starts listening on `host`:`port` (0: a free port; `::1` for IPv6) with nothing mounted.
    ///
    /// - Parameters:
    ///   - host: the address to listen on (`127.0.0.1`, `0.0.0.0`, `::1`).
    ///   - port: the TCP port; 0 takes a free one (see ``localAddress``).
    ///   - group: the event loops of the listener, its connections and their UDP sockets.
    ///   - configuration: timeouts and packet size.
    ///   - logger: gets a message for each session set up, played and ended, and for each
    ///     malformed request.
    /// - Throws: the error of binding the address.
    public static func start(host: String, port: Int, group: any EventLoopGroup, configuration: Configuration = .init(),
                             logger: Logger = .streamingSilent) async throws -> RTSPServer {
        let registry = Locked([ObjectIdentifier: any Channel]())
        let mounts = RTSPMounts()
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
        if let size = configuration.sendBufferSize {
            bootstrap = bootstrap.childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(size))
        }
        let channel = try await bootstrap
            .childChannelInitializer { channel in
                let key = ObjectIdentifier(channel)
                registry.withLock { $0[key] = channel }
                channel.closeFuture.whenComplete { _ in _ = registry.withLock { $0.removeValue(forKey: key) } }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        RTSPConnectionHandler(mounts: mounts, configuration: configuration, logger: logger))
                }
            }
            .bind(host: host, port: port).get()
        return RTSPServer(channel: channel, connections: registry, mounts: mounts)
    }

    /// Plays `broadcaster`'s stream, of `format`, at `path` (`/live`; a leading `/` is added).
    /// Mounting a path again replaces its stream for the sessions set up from then on.
    ///
    /// - Parameters:
    ///   - path: the mount path.
    ///   - broadcaster: the stream's publishing handle (shared with other servers if you like).
    ///   - format: the stream's format, described to players (DESCRIBE) with its parameter sets.
    public func mount(_ path: String, broadcaster: Broadcaster, format: FormatDescription) {
        mounts.set(RTSPMounts.normalized(path), RTSPMounts.Mount(broadcaster: broadcaster, format: format))
    }

    /// Makes a new stream of `format` at `path` and returns its publishing handle.
    ///
    /// - Parameters:
    ///   - path: the mount path.
    ///   - format: the stream's format, described to players with its parameter sets.
    ///   - queueLimit: frames a viewer may have in flight before it is skipped to the next IDR.
    ///   - onKeyframeRequest: called whenever a viewer asks for an IDR (see ``Broadcaster``).
    public func mount(_ path: String, format: FormatDescription, queueLimit: Int = 30,
                      onKeyframeRequest: @escaping @Sendable () -> Void = {}) -> Broadcaster {
        let broadcaster = Broadcaster(queueLimit: queueLimit, onKeyframeRequest: onKeyframeRequest)
        mount(path, broadcaster: broadcaster, format: format)
        return broadcaster
    }

    /// Stops playing `path` (the mount path): new requests for it get 404 (sessions already playing go on).
    public func unmount(_ path: String) {
        mounts.set(RTSPMounts.normalized(path), nil)
    }

    /// `rtsp://HOST:PORT/PATH` for `path` on `host` as clients should name it (the bound port).
    ///
    /// - Parameters:
    ///   - host: the host name or address clients connect to.
    ///   - path: the mount path.
    public func url(host: String, path: String) -> String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "rtsp://\(shownHost):\(localAddress?.port ?? 0)\(RTSPMounts.normalized(path))"
    }

    /// Stops listening and closes every RTSP connection (their sessions end, their UDP sockets
    /// close, and they leave their broadcasters); returns when all that is done.
    public func shutdown() async {
        try? await channel.close()
        let open = connections.withLock { Array($0.values) }
        for channel in open {
            try? await channel.close()
            // The session ends as the close completes, in the same turn of the channel's loop.
            try? await channel.eventLoop.submit {}.get()
        }
    }
}

/// The mount table of an ``RTSPServer``, shared by its connections.
final class RTSPMounts: Sendable {
    /// What plays at one path.
    struct Mount: Sendable {
        let broadcaster: Broadcaster
        let format: FormatDescription
    }

    private let table = Locked([String: Mount]())

    /// `path` with one leading `/` and no trailing one.
    static func normalized(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed.hasPrefix("/") ? String(trimmed) : "/" + trimmed
    }

    func set(_ path: String, _ mount: Mount?) {
        table.withLock { $0[path] = mount }
    }

    /// The mount a request path names: the mount path itself, with a trailing `/`, or its
    /// track (`/PATH/track1`).
    func find(_ requestPath: Substring) -> (path: String, mount: Mount)? {
        var path = Substring(requestPath)
        if path.hasSuffix("/track1") { path = path.dropLast("/track1".count) }
        let key = Self.normalized(String(path))
        return table.withLock { table in table[key].map { (key, $0) } }
    }
}
