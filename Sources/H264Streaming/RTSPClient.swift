public import H264
public import HEVC
public import MediaCore
import Logging
import NIOCore
import NIOPosix
public import RTP
public import RTSPMessages

/// Plays an RTSP stream (RFC 2326): ``open(url:group:configuration:logger:)`` connects and
/// sends OPTIONS, DESCRIBE, SETUP (RTP interleaved in the connection, or over a UDP port pair)
/// and PLAY; the client is then an `AsyncSequence` of ``Event``s — frames of either codec (H.264
/// by RFC 6184, H.265 by RFC 7798, as the SDP's `rtpmap` says: one access unit each, with its
/// RTP timestamp, presentation time and format), format changes, losses and diagnostics.
///
/// A server that answers `401 Unauthorized` gets the credentials of the URL
/// (`rtsp://USER:PASSWORD@HOST/…`) or of ``Configuration/credentials`` with the strongest scheme
/// it offers (Digest SHA-256, Digest MD5, Basic); the user info is never part of a request's URL,
/// of a message or of a log line. With ``Configuration/Transport-swift.enum/automatic`` the
/// client asks for UDP first and, when the server answers `461 Unsupported Transport` or no packet
/// arrives within ``Configuration/udpFallbackDelay`` of PLAY, for TCP. Answers without `CSeq`
/// (to the one request outstanding), a `Content-Base` without a scheme, session- and media-level
/// `a=control:` URLs (absolute, relative, `*`) and bogus `RTP-Info` values are read as FFmpeg
/// reads them (``warnings``).
///
/// RTCP: the server's sender reports give every frame its wall-clock time
/// (`RTPReceivedFrame.wallClock`) once the first one has arrived, and a receiver report goes
/// back every 5 s (``Configuration/receiverReportInterval``). A `301`/`302`/`303`/`305`/`307` with
/// `Location` to OPTIONS or DESCRIBE is followed (up to 3 times; the credentials go along only
/// to the same host; a loop is an error naming it).
///
/// The events end when the server closes the connection, when no packet arrives for the idle
/// timeout, when the keepalive fails, or at ``close()``; ``ending`` says which. With
/// ``Configuration/reconnect`` (24/7 recording) ``open(url:group:configuration:logger:)`` waits
/// for a camera that is not there yet, and a closed connection, a failed keepalive or a camera
/// silent for the idle timeout (10 s unless set) is instead a ``Event/disconnected(_:)``,
/// followed by new connections (DESCRIBE, SETUP, PLAY) with an exponential backoff until one
/// plays: ``Event/reconnected(_:)``, then the access units from the next keyframe on, the first
/// of them announced by ``Event/resumed(gap:)`` with the gap, their times going on from those
/// before. ``close()`` — or
/// cancelling the task that iterates the events — sends TEARDOWN and closes the connection. A
/// keepalive goes out at half the session's timeout (GET_PARAMETER when the server's `Public`
/// lists it, else OPTIONS) and its answer is awaited. Built on SwiftNIO channels: nothing blocks.
public final class RTSPClient: AsyncSequence, Sendable {
    /// What the stream delivers.
    public enum Event: Sendable {
        /// A frame (one access unit of either codec, 4-byte lengths) with its 90 kHz RTP timestamp
        /// and wall-clock time; its presentation time is the time since the first frame, across
        /// reconnections too (see ``resumed(gap:)``). A frame of the audio track (see
        /// ``RTSPClient/audioFormat``) is one too: its format is `.audio(_:)`, its timestamp in
        /// the track's clock, its presentation time on the same timeline as video's (the tracks
        /// lined up by the server's RTCP sender reports, by arrival before them).
        case frame(RTPReceivedFrame)
        /// The frames that follow are in this format: before the first frame, and when in-band
        /// parameter sets change it.
        case formatChanged(VideoFormatDescription)
        /// Packets were lost.
        case loss(RTPDepacketizer.Loss)
        /// A damaged packet or NAL unit, reported and skipped.
        case diagnostic(MediaError)
        /// With ``Configuration/reconnect``: the connection ended (why: ``Ending/idle`` for a
        /// camera that went silent), and the client is reconnecting.
        case disconnected(Ending)
        /// With ``Configuration/reconnect``: a new connection plays; access units resume at the
        /// next keyframe (IDR, IRAP).
        case reconnected(Reconnection)
        /// With ``Configuration/reconnect``: the access unit that follows is the first after a
        /// reconnection (a keyframe); `gap`: the time from the arrival of the last access unit
        /// before the disconnection to the arrival of this one (on the event loop's monotonic
        /// clock) — what the recording is missing, the silence before an idle timeout and the
        /// time until the next keyframe included. Its presentation (and decode) time is the
        /// latest one before plus `gap`, so the times go on rising across the gap whatever the
        /// new session's RTP timestamps; there is no event without an access unit before.
        case resumed(gap: Duration)
    }

    /// A reconnection: how many tries it took and how long the client was without a connection.
    public struct Reconnection: Sendable, Equatable {
        /// Tries, the successful one included.
        public var attempts: Int
        /// From the disconnection to the new connection playing (its PLAY answered).
        public var downtime: Duration
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

    /// What the handlers share with the client.
    struct State {
        var ending: RTSPClient.Ending?
        var statistics = RTPReceptionStatistics()
        /// The TEARDOWN and closing under way, which every ``RTSPClient/close()`` awaits.
        var closing: Task<Void, Never>?
        /// The connection that plays (or the last one, while reconnecting) and its number.
        var connection: RTSPClientConnection?
        var generation = 0
        /// The generation of ``connection``: only its handler's ending counts.
        var installedGeneration = -1
        /// The reconnection under way.
        var reconnecting: Task<Void, Never>?
        var disconnections = 0
        /// The latest presentation time given so far: a resumption goes on from it.
        var lastPresentationTime = Duration.zero
        /// When the last access unit arrived (the loop's clock): a resumption's gap counts from it.
        var lastArrival: NIODeadline?
        var lastSenderReport: RTCPSenderReport?
    }

    /// The events that may wait for the reader: past them, events are dropped (``droppedEvents``),
    /// and the frames after a dropped one up to the next keyframe too — never a broken GOP.
    public static let bufferLimit = 4096

    /// Events dropped because the reader fell ``bufferLimit`` behind, with the frames after
    /// them up to the next keyframe.
    public var droppedEvents: Int { continuation.dropped }

    /// The URL asked for, without user info.
    let requestedURL: String
    let credentials: RTSPCredentials?
    let loop: any EventLoop
    let stream: AsyncStream<Event>
    /// The events waiting for the reader, bounded (``bufferLimit``): a reader that falls behind
    /// loses events, and the frames after a lost one up to the next keyframe.
    let continuation: FrameEventQueue<Event, Never>
    let state: Locked<State>
    let configuration: Configuration
    let logger: Logger

    init(url: String, credentials: RTSPCredentials?, loop: any EventLoop, configuration: Configuration, logger: Logger) {
        requestedURL = url
        self.credentials = credentials
        self.loop = loop
        continuation = FrameEventQueue(limit: Self.bufferLimit, keyframeFlag: \.keyframeFlag)
        stream = continuation.stream
        state = Locked(State())
        self.configuration = configuration
        self.logger = logger
    }

    private var connection: RTSPClientConnection {
        guard let connection = state.withLock({ $0.connection }) else { preconditionFailure("an RTSPClient is returned connected") }
        return connection
    }

    /// The URL played (after redirects), without user info.
    public var url: String { connection.url }
    /// The stream's SDP, from DESCRIBE (of the latest connection).
    public var sessionDescription: SessionDescription { connection.sessionDescription }
    /// The session id the server gave at SETUP (of the latest connection).
    public var session: String { connection.session }
    /// The transport the server answered at SETUP (of the latest connection).
    public var transport: RTSPTransport { connection.transport }
    /// The UDP port RTP arrives on (RTP over UDP); nil for TCP interleaved.
    public var udpPort: Int? { connection.udpPort }
    /// The last RTCP sender report of the stream's source; nil before the first.
    public var lastSenderReport: RTCPSenderReport? { state.withLock { $0.lastSenderReport } }
    /// How many times the connection was lost (``Event/disconnected(_:)``).
    public var disconnections: Int { state.withLock { $0.disconnections } }

    /// What the camera's answers had that the standards do not allow and the client tolerated
    /// (of the latest connection): the SDP's warnings, a `Content-Base` without a scheme, bogus
    /// `RTP-Info` values; each is also logged as a warning.
    public var warnings: [MediaError] { connection.warnings }
    /// The played track's entry of the PLAY answer's `RTP-Info` (of the latest connection); nil
    /// without one.
    public var rtpInfo: RTSPRTPInfo.Stream? { connection.rtpInfo }

    /// The format of the SDP's parameter sets (`sprop-parameter-sets`; H.265: `sprop-vps/sps/pps`)
    /// of either codec; nil without them (they then come in band, announced by
    /// ``Event/formatChanged(_:)``).
    public var format: VideoFormatDescription? { try? sessionDescription.videoFormat() }

    /// The H.264 format of the SDP's `sprop-parameter-sets`; nil without them or for H.265
    /// (see ``format``).
    public var formatDescription: FormatDescription? { codec == .h264 ? try? sessionDescription.formatDescription() : nil }

    /// The format of the audio track played (from the SDP's `m=audio` section: codec, rate,
    /// channels, configuration); nil when the stream has none, none this client reads, its SETUP
    /// was refused, or ``Configuration/audio`` is off. Its frames are ``Event/frame(_:)`` events
    /// whose format is `.audio(_:)`.
    public var audioFormat: AudioFormatDescription? { connection.audio?.media.format }

    /// The `m=audio` section of the audio track played (see ``audioFormat``); nil without one.
    public var audioMedia: AudioMediaDescription? { connection.audio?.media }

    /// The stream's codec, from the SDP's `rtpmap`: `.hevc` for `H265`, else `.h264`. Both give
    /// the same ``Event/frame(_:)`` events.
    public var codec: VideoCodec { sessionDescription.codec }

    /// Why the events ended; nil while they go on.
    public var ending: Ending? { state.withLock { $0.ending } }

    /// The depacketizer's counts so far, over every connection.
    public var statistics: RTPReceptionStatistics { state.withLock { $0.statistics } }

    /// The events, in arrival order.
    public func makeAsyncIterator() -> AsyncStream<Event>.AsyncIterator { stream.makeAsyncIterator() }
}
