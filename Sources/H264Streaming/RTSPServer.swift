public import H264
public import HEVC
public import Logging
public import NIOCore
import NIOPosix
public import RTP

/// An RTSP server (RFC 2326) that plays live streams and takes published ones: each play
/// mount path (`/live`, `/cam1`, …) is a ``Broadcaster`` with its format, at
/// `rtsp://HOST:PORT/PATH`, one RTP stream per viewer (H.264 by RFC 6184, packetization-mode 1;
/// H.265 by RFC 7798, as the mount's `VideoFormatDescription` says),
/// interleaved in the viewer's RTSP connection (`RTP/AVP/TCP`) or over UDP unicast
/// (`RTP/AVP;unicast;client_port=A-B`); each record mount path
/// (``mountRecording(_:authentication:)``) takes publishers (ANNOUNCE, SETUP with `mode=record`, RECORD) and
/// hands each to the program as an ``RTSPPublisher``.
///
/// Both kinds of path are served by one connection state machine: the request preamble,
/// session ids, timeouts, UDP port pairs and interleaved framing are the same; the session
/// set up plays or records by the path it names.
///
/// Viewers are clients of the path's broadcaster: PLAY joins it (so the viewer gets the
/// parameter sets and a keyframe — an IDR, or an H.265 IRAP picture — forced for it at once, or
/// the kept GOP of a relay), PAUSE, TEARDOWN or a closed connection leaves it, and a
/// viewer that stops reading is skipped to the next IDR without slowing the others. The
/// broadcaster packetizes each access unit once for the stream (`VideoRTPPacketizer`: one SSRC
/// and one sequence of numbers, as a shared media of gst-rtsp-server), and every viewer's
/// connection writes those same bytes (an interleaved viewer on channel 0 the very buffer,
/// another its own 4-byte headers before the packets, a UDP viewer one datagram per packet).
///
/// With an ``Authentication`` (for the server, ``Configuration/authentication``, or for one
/// path), requests need a user's credentials (Digest or Basic) and get `401 Unauthorized`
/// without them.
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
        /// Record paths: a recording with no packet for this long ends
        /// (``RTSPPublisher/Ending/idle``); nil: never.
        public var idleTimeout: Duration?
        /// Record paths: how often the idle timeout is checked.
        public var recordCheckInterval: Duration = .milliseconds(200)
        /// Record paths: after a UDP publisher has left, its recording ends once no packet has
        /// come for this long (packets sent before its TEARDOWN may arrive after it).
        public var lingering: Duration = .milliseconds(100)
        /// Record paths: how many later packets may wait for a missing one before it counts as lost.
        public var reorderWindow = 16
        /// Record paths: the kernel receive buffer of a UDP publisher's RTP socket (room for a
        /// burst: FFmpeg without `-re` sends a whole file at once).
        public var receiveBufferSize = 4 << 20
        /// Who may play and publish (every path without its own); nil: anyone.
        public var authentication: Authentication?
        /// The certificate and key of RTSPS (RTSP over TLS): with them, every connection speaks
        /// TLS (clients name the server `rtsps://`, ``url(host:path:)``), and RTP goes
        /// interleaved in it only (SETUP for UDP gets 461, so the media is as private as the
        /// requests); nil: plain RTSP.
        public var tls: RTSPTLSIdentity?

        /// The defaults: 60 s sessions, 10 s requests, 1400-byte packets, no idle timeout, no
        /// authentication.
        public init() {}
    }

    /// The listening channel.
    private let channel: any Channel
    /// The open RTSP connections, by channel.
    private let connections: Locked<[ObjectIdentifier: any Channel]>
    private let mounts: RTSPMounts
    private let configuration: Configuration
    private let logger: Logger
    private let eventSink: AsyncStream<ServerEvent>.Continuation
    /// The sessions as they are set up, play, record and end (``ServerEvent/sessionSetUp(session:path:address:transport:)``,
    /// ``ServerEvent/sessionPlaying(session:client:)``, ``ServerEvent/sessionRecording(session:)``,
    /// ``ServerEvent/sessionEnded(session:reason:)``), for one reader; the newest
    /// ``ServerEvent/bufferLimit`` wait when nobody reads. Ends once ``shutdown()`` has returned.
    public let events: AsyncStream<ServerEvent>
    /// The checks of the record paths' idle timeouts.
    private let recordChecks = Locked([String: RepeatedTask]())

    private init(channel: any Channel, connections: Locked<[ObjectIdentifier: any Channel]>, mounts: RTSPMounts,
                 configuration: Configuration, logger: Logger,
                 events: (AsyncStream<ServerEvent>, AsyncStream<ServerEvent>.Continuation)) {
        (self.events, eventSink) = events
        self.channel = channel
        self.connections = connections
        self.mounts = mounts
        self.configuration = configuration
        self.logger = logger
    }

    /// The event loop of the listener and of all its connections and their UDP sockets.
    private var loop: any EventLoop { channel.eventLoop }

    /// The address the server listens on (with the port the system chose for port 0).
    public var localAddress: SocketAddress? { channel.localAddress }

    /// How many RTSP connections are open (0 once ``shutdown()`` has returned).
    public var connectionCount: Int { connections.withLock { $0.count } }

    /// Starts listening on `host`:`port` (0: a free port; `::1` for IPv6) with nothing mounted.
    ///
    /// - Parameters:
    ///   - host: the address to listen on (`127.0.0.1`, `0.0.0.0`, `::1`).
    ///   - port: the TCP port; 0 takes a free one (see ``localAddress``).
    ///   - group: the server takes one of its event loops for the listener, its connections
    ///     and their UDP sockets.
    ///   - configuration: timeouts and packet size.
    ///   - logger: gets a message for each session set up, played and ended, and for each
    ///     malformed request.
    /// - Throws: the error of binding the address.
    public static func start(host: String, port: Int, group: any EventLoopGroup, configuration: Configuration = .init(),
                             logger: Logger = .streamingSilent) async throws -> RTSPServer {
        let registry = Locked([ObjectIdentifier: any Channel]())
        let mounts = RTSPMounts()
        let events = ServerEvent.makeStream()
        let nonces = RTSPDigestNonces()
        var bootstrap = ServerBootstrap(group: group.next())
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
                    if let tls = configuration.tls { try channel.pipeline.syncOperations.addHandler(tls.makeHandler()) }
                    try channel.pipeline.syncOperations.addHandler(
                        RTSPConnectionHandler(mounts: mounts, configuration: configuration, logger: logger, events: events.1,
                                              nonces: nonces))
                }
            }
            .bind(host: host, port: port).get()
        return RTSPServer(channel: channel, connections: registry, mounts: mounts, configuration: configuration, logger: logger,
                          events: events)
    }

    /// Plays `broadcaster`'s stream, of `format`, at `path` (`/live`; a leading `/` is added).
    /// Mounting a path again replaces its stream (and its authentication) for the sessions set
    /// up from then on.
    ///
    /// - Parameters:
    ///   - path: the mount path.
    ///   - broadcaster: the stream's publishing handle (shared with other servers if you like).
    ///   - format: the stream's format, described to players (DESCRIBE) with its parameter sets.
    ///   - authentication: who may play it; nil: the server's ``Configuration/authentication``.
    public func mount(_ path: String, broadcaster: Broadcaster, format: FormatDescription, authentication: Authentication? = nil) {
        mount(path, broadcaster: broadcaster, format: .h264(format), authentication: authentication)
    }

    /// Plays `broadcaster`'s stream, H.264 or H.265, at `path` (`/live`; a leading `/` is
    /// added): its SDP says `H264/90000` with `sprop-parameter-sets`, or `H265/90000` with
    /// `sprop-vps`, `sprop-sps` and `sprop-pps`, and each viewer's packets follow RFC 6184 or RFC
    /// 7798. Mounting a path again replaces its stream (and its authentication) for the
    /// sessions set up from then on.
    ///
    /// - Parameters:
    ///   - path: the mount path.
    ///   - broadcaster: the stream's publishing handle (shared with other servers if you like).
    ///   - format: the stream's format, described to players (DESCRIBE) with its parameter sets.
    ///   - authentication: who may play it; nil: the server's ``Configuration/authentication``.
    public func mount(_ path: String, broadcaster: Broadcaster, format: VideoFormatDescription, authentication: Authentication? = nil) {
        mount(path, broadcaster: broadcaster, format: format, audio: nil, authentication: authentication)
    }

    /// Plays `broadcaster`'s stream, H.264 or H.265 with an audio track, at `path`: its SDP has
    /// the video section (control `track1`) and `audio`'s `m=audio` section as given (its codec,
    /// rate, channels and configuration; control `track2`). A viewer sets up either track or
    /// both (audio interleaved on channels 2–3, or its own UDP port pair); the broadcaster's
    /// audio frames are made into the audio track's packets once for every viewer of it, stamped
    /// on the stream's clock as the video's are, and the RTCP sender reports of both tracks map
    /// the same wall clock (so players line them up).
    ///
    /// - Parameters:
    ///   - path: the mount path.
    ///   - broadcaster: the stream's publishing handle; its audio frames (``LiveFrame/init(audio:format:presentationTime:)``)
    ///     go to the audio track.
    ///   - format: the video format, described to players with its parameter sets.
    ///   - audio: the audio track's description (a camera's ``RTSPClient/audioMedia``); nil: video only.
    ///   - authentication: who may play it; nil: the server's ``Configuration/authentication``.
    public func mount(_ path: String, broadcaster: Broadcaster, format: VideoFormatDescription, audio: AudioMediaDescription?,
                      authentication: Authentication? = nil) {
        broadcaster.enableRTP(maximumTransmissionUnit: configuration.maximumTransmissionUnit)
        var track = audio
        track?.control = "track2"
        track?.warnings = []
        if let track { broadcaster.enableAudioRTP(track) }
        mounts.set(RTSPMounts.normalized(path), RTSPMounts.Mount(broadcaster: broadcaster, format: format, audio: track),
                   authentication: authentication)
    }

    /// Makes a new stream of `format` at `path` and returns its publishing handle.
    ///
    /// - Parameters:
    ///   - path: the mount path.
    ///   - format: the stream's format, described to players with its parameter sets.
    ///   - queueLimit: frames a viewer may have in flight before it is skipped to the next IDR.
    ///   - authentication: who may play it; nil: the server's ``Configuration/authentication``.
    ///   - onKeyframeRequest: called whenever a viewer asks for an IDR (see ``Broadcaster``).
    public func mount(_ path: String, format: FormatDescription, queueLimit: Int = 30, authentication: Authentication? = nil,
                      onKeyframeRequest: @escaping @Sendable () -> Void = {}) -> Broadcaster {
        mount(path, format: .h264(format), queueLimit: queueLimit, authentication: authentication, onKeyframeRequest: onKeyframeRequest)
    }

    /// Makes a new stream of `format` (H.264 or H.265) at `path` and returns its publishing handle.
    ///
    /// - Parameters:
    ///   - path: the mount path.
    ///   - format: the stream's format, described to players with its parameter sets.
    ///   - queueLimit: frames a viewer may have in flight before it is skipped to the next keyframe.
    ///   - authentication: who may play it; nil: the server's ``Configuration/authentication``.
    ///   - onKeyframeRequest: called whenever a viewer asks for a keyframe (see ``Broadcaster``).
    public func mount(_ path: String, format: VideoFormatDescription, queueLimit: Int = 30, authentication: Authentication? = nil,
                      onKeyframeRequest: @escaping @Sendable () -> Void = {}) -> Broadcaster {
        let broadcaster = Broadcaster(queueLimit: queueLimit, onKeyframeRequest: onKeyframeRequest)
        mount(path, broadcaster: broadcaster, format: format, authentication: authentication)
        return broadcaster
    }

    /// Takes publishers at `path` (`/live`; `/` takes every path not mounted otherwise): each
    /// that starts recording comes out of the returned sequence as an ``RTSPPublisher``, an
    /// `AsyncSequence` of its depacketized events. The sequence ends when the path is
    /// unmounted or the server shuts down.
    ///
    /// One publisher records at a time: an ANNOUNCE while another connection holds the path
    /// gets 453 Not Enough Bandwidth; the path is free again once that recording has ended.
    ///
    /// - Parameters:
    ///   - path: the mount path publishers push to.
    ///   - authentication: who may publish; nil: the server's ``Configuration/authentication``.
    /// - Returns: the publishers, each as it starts recording.
    public func mountRecording(_ path: String, authentication: Authentication? = nil) -> AsyncStream<RTSPPublisher> {
        let (publishers, continuation) = AsyncStream.makeStream(of: RTSPPublisher.self)
        let loop = self.loop, configuration = self.configuration
        let recording = NIOLoopBoundBox.makeBoxSendingValue(
            RTSPRecording(configuration: configuration, logger: logger, loop: loop, publishers: continuation), eventLoop: loop)
        let check = loop.scheduleRepeatedTask(initialDelay: TimeAmount(configuration.recordCheckInterval),
                                              delay: TimeAmount(configuration.recordCheckInterval)) { _ in recording.value.check() }
        let key = RTSPMounts.normalized(path)
        recordChecks.withLock { $0.updateValue(check, forKey: key) }?.cancel()
        Self.close(mounts.set(key, entry: .record(recording), authentication: authentication))
        return publishers
    }

    /// Stops playing or recording `path` (the mount path): new requests for it get 404
    /// (sessions already playing go on; a recording there ends, ``RTSPPublisher/Ending/stopped``).
    public func unmount(_ path: String) {
        let key = RTSPMounts.normalized(path)
        recordChecks.withLock { $0.removeValue(forKey: key) }?.cancel()
        Self.close(mounts.set(key, entry: nil))
    }

    /// Ends the recording of a record path's `entry` (on its loop).
    private static func close(_ entry: RTSPMounts.Entry?) {
        guard case .record(let recording) = entry else { return }
        recording.eventLoop.execute { recording.value.close() }
    }

    /// `rtsp://HOST:PORT/PATH` (`rtsps://` with ``Configuration/tls``) for `path` on `host` as
    /// clients should name it (the bound port).
    ///
    /// - Parameters:
    ///   - host: the host name or address clients connect to.
    ///   - path: the mount path.
    public func url(host: String, path: String) -> String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(configuration.tls == nil ? "rtsp" : "rtsps")://\(shownHost):\(localAddress?.port ?? 0)\(RTSPMounts.normalized(path))"
    }

    /// Stops listening, ends the recordings (``RTSPPublisher/Ending/stopped``) and their
    /// sequences of publishers, and closes every RTSP connection (their sessions end, their UDP
    /// sockets close, and they leave their broadcasters); returns when all that is done.
    public func shutdown() async {
        try? await channel.close()
        for check in recordChecks.withLock({ Array($0.values) }) { check.cancel() }
        let recordings = mounts.entries.compactMap { entry -> NIOLoopBoundBox<RTSPRecording>? in
            if case .record(let recording) = entry { recording } else { nil }
        }
        try? await loop.submit { for recording in recordings { recording.value.close() } }.get()
        let open = connections.withLock { Array($0.values) }
        for channel in open {
            try? await channel.close()
            // The session ends as the close completes, in the same turn of the channel's loop.
            try? await channel.eventLoop.submit {}.get()
        }
        eventSink.finish()
    }
}
