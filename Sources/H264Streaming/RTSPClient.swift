public import H264
import Logging
import NIOCore
import NIOPosix

/// Plays an RTSP stream (RFC 2326): ``open(url:group:configuration:logger:)`` connects and
/// sends OPTIONS, DESCRIBE, SETUP (RTP interleaved in the connection, or over a UDP port pair)
/// and PLAY; the client is then an `AsyncSequence` of ``Event``s — access units (AVCC, with
/// their RTP timestamp and presentation time), format changes, losses and diagnostics.
///
/// A server that answers `401 Unauthorized` gets the credentials of the URL
/// (`rtsp://USER:PASSWORD@HOST/…`) or of ``Configuration/credentials`` with the strongest scheme
/// it offers (Digest SHA-256, Digest MD5, Basic); the user info is never part of a request's URL,
/// of a message or of a log line. With ``Configuration/Transport-swift.enum/automatic`` the
/// client asks for UDP first and, when the server answers `461 Unsupported Transport`, for TCP.
///
/// The events end when the server closes the connection, when no packet arrives for the idle
/// timeout, when the keepalive fails, or at ``close()``; ``ending`` says which. ``close()`` — or
/// cancelling the task that iterates the events — sends TEARDOWN and closes the connection. A
/// keepalive goes out at half the session's timeout (GET_PARAMETER when the server's `Public`
/// lists it, else OPTIONS) and its answer is awaited. Built on SwiftNIO channels: nothing blocks.
public final class RTSPClient: AsyncSequence, Sendable {
    /// What the stream delivers.
    public enum Event: Sendable {
        /// An access unit (AVCC) with its 90 kHz RTP timestamp, and its presentation time since
        /// the first access unit.
        case accessUnit(RTPDepacketizer.ReceivedAccessUnit, presentationTime: Duration)
        /// The next access unit has new parameter sets.
        case formatChange(FormatDescription)
        /// Packets were lost.
        case loss(RTPDepacketizer.Loss)
        /// A damaged packet or NAL unit, reported and skipped.
        case diagnostic(H264Error)
    }

    /// Why the events ended.
    public enum Ending: Sendable, Equatable {
        /// The server closed the connection.
        case serverClosed
        /// No packet came for the idle timeout.
        case idle
        /// ``RTSPClient/close()`` (or cancellation) ended it.
        case closed
        /// A keepalive request got no answer within the request timeout, or an answer other
        /// than 2xx; the connection was closed.
        case keepAliveFailed(RTSPClientError)
    }

    /// How to play.
    public struct Configuration: Sendable {
        /// The RTP transport to ask for.
        public enum Transport: Sendable {
            /// UDP first (as FFmpeg does); TCP interleaved when the server answers SETUP with
            /// `461 Unsupported Transport`.
            case automatic
            /// RTP interleaved in the RTSP connection only.
            case tcp
            /// RTP over a UDP port pair only.
            case udp
        }

        /// How RTP comes: ``Transport-swift.enum/automatic`` (the default), TCP or UDP.
        public var transport = Transport.automatic
        /// The user and password for a server that answers `401 Unauthorized`; nil: those of the
        /// URL's user info, if any. Set here, they win over the URL's.
        public var credentials: RTSPCredentials?
        /// How long to wait for each answer.
        public var requestTimeout: Duration = .seconds(10)
        /// How long to wait for the answer to TEARDOWN at ``RTSPClient/close()``.
        public var teardownTimeout: Duration = .seconds(2)
        /// The events end when no packet came for this long; nil: never.
        public var idleTimeout: Duration?
        /// How often a keepalive (GET_PARAMETER, or OPTIONS when the server does not list
        /// GET_PARAMETER in `Public`) keeps the server's session alive; nil: at half the
        /// `timeout` of the server's `Session` header (60 s when it gives none).
        public var keepAliveInterval: Duration?
        /// How many later packets may wait for a missing one before it counts as lost.
        public var reorderWindow = 16
        /// The `User-Agent` of the requests.
        public var userAgent = "swift-h264"

        /// Automatic transport, no credentials, 10 s requests, no idle timeout.
        public init() {}
    }

    /// What the handler shares with the client.
    struct State {
        var ending: RTSPClient.Ending?
        var statistics = RTPReceptionStatistics()
        /// The TEARDOWN and closing under way, which every ``RTSPClient/close()`` awaits.
        var closing: Task<Void, Never>?
    }

    /// The URL played, without user info.
    public let url: String
    /// The stream's SDP, from DESCRIBE.
    public let sessionDescription: SessionDescription
    /// The session id the server gave at SETUP.
    public let session: String
    /// The transport the server answered at SETUP.
    public let transport: RTSPTransport
    /// The UDP port RTP arrives on (RTP over UDP); nil for TCP interleaved.
    public let udpPort: Int?
    let aggregateURL: String
    let channel: any Channel
    let udp: (any Channel, any Channel)?
    let handler: NIOLoopBound<RTSPClientHandler>
    let stream: AsyncStream<Event>
    let state: Locked<State>
    let configuration: Configuration
    let logger: Logger

    init(url: String, sessionDescription: SessionDescription, session: String, transport: RTSPTransport, aggregateURL: String,
         channel: any Channel, udp: (any Channel, any Channel)?, handler: NIOLoopBound<RTSPClientHandler>,
         stream: AsyncStream<Event>, state: Locked<State>, configuration: Configuration, logger: Logger) {
        self.url = url
        self.sessionDescription = sessionDescription
        self.session = session
        self.transport = transport
        self.udpPort = udp?.0.localAddress?.port
        self.aggregateURL = aggregateURL
        self.channel = channel
        self.udp = udp
        self.handler = handler
        self.stream = stream
        self.state = state
        self.configuration = configuration
        self.logger = logger
    }

    /// The format of the SDP's `sprop-parameter-sets`; nil without them (they then come in band).
    public var formatDescription: FormatDescription? { try? sessionDescription.formatDescription() }

    /// Why the events ended; nil while they go on.
    public var ending: Ending? { state.withLock { $0.ending } }

    /// The depacketizer's counts so far.
    public var statistics: RTPReceptionStatistics { state.withLock { $0.statistics } }

    /// The events, in arrival order.
    public func makeAsyncIterator() -> AsyncStream<Event>.AsyncIterator { stream.makeAsyncIterator() }
}
