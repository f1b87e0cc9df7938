extension RTSPClient {
    /// How an ``RTSPClient`` plays.
    public struct Configuration: Sendable {
        /// The RTP transport to ask for.
        public enum Transport: Sendable {
            /// UDP first (as FFmpeg does); TCP interleaved when the server answers SETUP with
            /// `461 Unsupported Transport`, or when no packet arrives over UDP within
            /// ``Configuration/udpFallbackDelay`` of PLAY (a firewall or NAT in the way). For
            /// `rtsps://`, TCP interleaved only, so that the media stays inside TLS as the
            /// requests do (as FFmpeg and GStreamer do).
            case automatic
            /// RTP interleaved in the RTSP connection only.
            case tcp
            /// RTP over a UDP port pair only.
            case udp
        }

        /// How RTP comes: `Transport-swift.enum.automatic` (the default), TCP or UDP.
        public var transport = Transport.automatic
        /// The user and password for a server that answers `401 Unauthorized`; nil: those of the
        /// URL's user info, if any. Set here, they win over the URL's.
        public var credentials: RTSPCredentials?
        /// With the `Transport-swift.enum.automatic` transport over UDP: how long after PLAY
        /// the first packet (RTP or RTCP) may take. When none came, the session is torn down and
        /// set up again over TCP interleaved on a new connection, as FFmpeg's `rtspdec.c` ("UDP
        /// timeout, retrying with TCP") and gortsplib's client (`InitialUDPReadTimeout`, 3 s) do;
        /// ``RTSPClient/open(url:group:configuration:logger:)`` returns once a packet came or the
        /// TCP session plays. nil: never.
        public var udpFallbackDelay: Duration? = .seconds(3)
        /// How long to wait for each answer.
        public var requestTimeout: Duration = .seconds(10)
        /// How long to wait for the answer to TEARDOWN at ``RTSPClient/close()``.
        public var teardownTimeout: Duration = .seconds(2)
        /// How long a playing connection may go without an RTP packet before the
        /// camera counts as lost (``RTSPClient/Ending/idle``): without ``reconnect`` the events
        /// end then; with it, that is a disconnection like any other and the client reconnects.
        /// nil: never without ``reconnect``, and ``Reconnect-swift.struct/defaultIdleTimeout`` (10 s) with it
        /// — a camera that goes silent but keeps its connection open must not stop a 24/7
        /// recording for good.
        public var idleTimeout: Duration?
        /// How often a keepalive (GET_PARAMETER, or OPTIONS when the server does not list
        /// GET_PARAMETER in `Public`) keeps the server's session alive; nil: at half the
        /// `timeout` of the server's `Session` header (60 s when it gives none).
        public var keepAliveInterval: Duration?
        /// How many later packets may wait for a missing one before it counts as lost.
        public var reorderWindow = 16
        /// The `User-Agent` of the requests.
        public var userAgent = "swift-h264"
        /// How often an RTCP receiver report goes to the server (RFC 3550 clause 6.4.2; some
        /// cameras stop sending without them); nil: never.
        public var receiverReportInterval: Duration? = .seconds(5)
        /// What an `rtsps://` URL's server must present as its certificate; the system's root
        /// certificates by default.
        public var tlsTrust = RTSPTLSTrust.systemRoots
        /// Whether and how to reconnect when the connection closes, the server's session ends,
        /// the keepalive fails or no packet comes for the idle timeout; and whether
        /// ``RTSPClient/open(url:group:configuration:logger:)`` keeps trying a camera that is not
        /// there yet (it retries with the same backoff). nil (the default): the events end then,
        /// and `open` throws at the first failure.
        public var reconnect: Reconnect?
        /// Whether to play the SDP's audio track too (AAC, G.711 µ-law or A-law, Opus), set up
        /// after the video track, its frames ``RTSPClient/Event/frame(_:)`` events like video's
        /// (their format `.audio`) on the same timeline. A server that refuses its SETUP is
        /// played without audio (a warning, and a ``RTSPClient/Event/diagnostic(_:)``). True by
        /// default.
        public var audio = true

        /// The idle timeout in force: ``idleTimeout``, else ``Reconnect-swift.struct/defaultIdleTimeout`` with
        /// ``reconnect``.
        var effectiveIdleTimeout: Duration? { idleTimeout ?? reconnect.map { _ in Reconnect.defaultIdleTimeout } }

        /// How ``RTSPClient`` reconnects: after `initialDelay`, then after twice as long each time
        /// up to `maximumDelay`, for at most `maximumAttempts` tries in a row (nil: no limit).
        public struct Reconnect: Sendable, Equatable {
            /// The wait before the first try.
            public var initialDelay: Duration
            /// The longest wait between tries.
            public var maximumDelay: Duration
            /// Tries in a row before the events end with the disconnection's ending (or, for the
            /// first connection, before ``RTSPClient/open(url:group:configuration:logger:)``
            /// throws the last try's error); nil: no limit.
            public var maximumAttempts: Int?

            /// The idle timeout when ``Configuration/idleTimeout`` is nil: 10 s without a packet
            /// (a camera sends several a second) make a connection lost.
            public static let defaultIdleTimeout = Duration.seconds(10)

            /// 1 s, doubling up to 30 s, without a limit on the tries by default.
            public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30), maximumAttempts: Int? = nil) {
                self.initialDelay = initialDelay
                self.maximumDelay = Swift.max(initialDelay, maximumDelay)
                self.maximumAttempts = maximumAttempts.map { Swift.max(1, $0) }
            }
        }

        /// Automatic transport, no credentials, 10 s requests, no idle timeout, no reconnection.
        public init() {}
    }
}
