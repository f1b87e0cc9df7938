import H264
public import Logging
public import NIOCore
import NIOPosix

/// An RTSP server in record mode (RFC 2326): publishers push their H.264 stream to
/// `rtsp://HOST:PORT/PATH` with ANNOUNCE (the SDP), SETUP with `mode=record` (RTP interleaved
/// in TCP, or over UDP) and RECORD — as FFmpeg's `-f rtsp` and GStreamer's `rtspclientsink`
/// do. Each publisher that starts recording comes out of ``publishers`` as an
/// ``RTSPPublisher``: an `AsyncSequence` of its depacketized events.
///
/// One publisher records at a time: an ANNOUNCE while another connection holds the path gets
/// 453 Not Enough Bandwidth; the path is free again once that recording has ended. The
/// listener, its connections and their UDP sockets run on one event loop.
public final class RTSPRecordServer: Sendable {
    /// Timeouts and receiving settings.
    public struct Configuration: Sendable {
        /// A connection that is not recording and sends nothing for this long closes
        /// (advertised in `Session`).
        public var sessionTimeout: Duration = .seconds(60)
        /// A request that has begun must be complete within this time (else 408, and the
        /// connection closes).
        public var requestTimeout: Duration = .seconds(10)
        /// How often each connection checks its timeouts.
        public var checkInterval: Duration = .seconds(1)
        /// A recording with no packet for this long ends (``RTSPPublisher/Ending/idle``); nil:
        /// never.
        public var idleTimeout: Duration?
        /// How often the idle timeout is checked.
        public var recordCheckInterval: Duration = .milliseconds(200)
        /// After a UDP publisher has left, its recording ends once no packet has come for this
        /// long (packets sent before its TEARDOWN may arrive after it).
        public var lingering: Duration = .milliseconds(100)
        /// How many later packets may wait for a missing one before it counts as lost.
        public var reorderWindow = 16
        /// The kernel receive buffer of a UDP publisher's RTP socket (room for a burst: FFmpeg
        /// without `-re` sends a whole file at once).
        public var receiveBufferSize = 4 << 20

        /// The defaults: 60 s sessions, 10 s requests, no idle timeout.
        public init() {}
    }

    /// The path publishers push to (`/live`), as given to ``start(host:port:path:group:configuration:logger:)``.
    public let path: String
    /// The publishers, each as it starts recording; ends at ``shutdown()``.
    public let publishers: AsyncStream<RTSPPublisher>
    private let channel: any Channel
    private let recording: NIOLoopBound<RTSPRecording>
    private let connections: Locked<[ObjectIdentifier: any Channel]>

    private init(path: String, publishers: AsyncStream<RTSPPublisher>, channel: any Channel,
                 recording: NIOLoopBound<RTSPRecording>, connections: Locked<[ObjectIdentifier: any Channel]>) {
        self.path = path
        self.publishers = publishers
        self.channel = channel
        self.recording = recording
        self.connections = connections
    }

    /// The address the server listens on (with the port the system chose for port 0).
    public var localAddress: SocketAddress? { channel.localAddress }

    /// `rtsp://HOST:PORT/PATH` with the bound port, `host` as clients should name it.
    ///
    /// - Parameter host: the host name or address publishers connect to.
    public func url(host: String) -> String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "rtsp://\(shownHost):\(localAddress?.port ?? 0)\(path)"
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
        let loop = group.next()
        let (publishers, continuation) = AsyncStream.makeStream(of: RTSPPublisher.self)
        let registry = Locked([ObjectIdentifier: any Channel]())
        let (channel, recording) = try await loop.flatSubmit { () -> EventLoopFuture<(any Channel, NIOLoopBound<RTSPRecording>)> in
            let recording = NIOLoopBound(RTSPRecording(configuration: configuration, logger: logger, loop: loop,
                                                       publishers: continuation), eventLoop: loop)
            let check = loop.scheduleRepeatedTask(initialDelay: TimeAmount(configuration.recordCheckInterval),
                                                  delay: TimeAmount(configuration.recordCheckInterval)) { _ in recording.value.check() }
            return ServerBootstrap(group: loop)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    let key = ObjectIdentifier(channel)
                    registry.withLock { $0[key] = channel }
                    channel.closeFuture.whenComplete { _ in _ = registry.withLock { $0.removeValue(forKey: key) } }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            RTSPRecordHandler(recording: recording.value, path: path, configuration: configuration))
                    }
                }
                .bind(host: host, port: port)
                .map { channel in
                    channel.closeFuture.whenComplete { _ in check.cancel() }
                    return (channel, recording)
                }
                .flatMapErrorThrowing { error in
                    check.cancel()
                    throw error
                }
        }.get()
        return RTSPRecordServer(path: path.isEmpty ? "/" : path, publishers: publishers, channel: channel,
                                recording: recording, connections: registry)
    }

    /// Stops listening, ends the current recording (``RTSPPublisher/Ending/stopped``), closes
    /// every connection and ends ``publishers``; returns when all that is done.
    public func shutdown() async {
        try? await channel.close()
        let recording = self.recording
        try? await channel.eventLoop.submit { recording.value.close() }.get()
        let open = connections.withLock { Array($0.values) }
        for channel in open {
            try? await channel.close()
            try? await channel.eventLoop.submit {}.get()
        }
    }
}
