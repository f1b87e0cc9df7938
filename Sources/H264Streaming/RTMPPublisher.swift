public import H264
public import HEVC
public import Logging
public import NIOCore
public import MediaContainers

/// Publishes H.264 or H.265 to an RTMP server — nginx-rtmp, SRS, MediaMTX, FFmpeg, YouTube, Twitch —
/// as encoders do (RTMP specification clause 7.2; FFmpeg's `rtmpproto.c`): the handshake,
/// `connect`, `releaseStream`, `FCPublish`, `createStream`, `publish` (live), then
/// `@setDataFrame onMetaData`, the sequence header (the avcC, or for H.265 the hvcC in an
/// Enhanced RTMP `hvc1` tag) and the coded frames as FLV video tag bodies; ``finish()`` sends the
/// end of sequence, `FCUnpublish` and `deleteStream`. Audio frames (AAC, G.711) go as FLV audio
/// tag bodies with ``send(audio:format:timestamp:)``, the AAC sequence header before the first.
///
/// ```swift
/// let publisher = try await RTMPPublisher.connect(to: "rtmp://127.0.0.1/live/key", group: group)
/// for frame in frames {            // decoding order
///     try await publisher.send(avcc: frame.data, format: format, isKeyframe: frame.isIDR,
///                              decodeTime: frame.dts, presentationTime: frame.pts)
/// }
/// await publisher.finish()
/// ```
///
/// A new sequence header goes out before the first frame of another format (a resolution
/// switch). When the connection cannot keep up (its outbound buffer is above
/// ``Configuration/writeBufferLimit``), frames are dropped up to the next IDR and counted in
/// ``statistics``; nothing is buffered beyond that bound.
public final class RTMPPublisher: Sendable {
    /// How the publisher connects and writes.
    public struct Configuration: Sendable {
        /// The most time for the TCP (and TLS) connection. Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// The most time for the handshake and for each answer (`_result`, `onStatus`). Default 10 s.
        public var commandTimeout: Duration = .seconds(10)
        /// The chunk size sent (`Set Chunk Size`, 1…65,536). Default 4096.
        public var chunkSize = 4096
        /// The outbound bytes the connection may hold before frames are dropped up to the next
        /// IDR. Default 2 MiB.
        public var writeBufferLimit = 2 << 20
        /// The video tag syntax of H.264: legacy FLV (`CodecID` 7, what every server reads; the
        /// default) or Enhanced RTMP (`avc1`; `connect` then lists `fourCcList` `avc1`, `hvc1`).
        /// H.265 always goes in Enhanced RTMP `hvc1` tags.
        public var syntax: FLVVideoTag.Syntax = .legacy
        /// What an `rtmps://` server's certificate must be (the one trust type of RTSPS).
        public var tlsTrust: RTSPTLSTrust = .systemRoots
        /// The `flashVer` of `connect`.
        public var flashVer = "FMLE/3.0 (compatible; swift-h264)"
        /// Whether and how to publish again when the connection drops (the server restarts, the
        /// network fails): nil (the default), never — the next send throws the failure. With a
        /// policy, frames are dropped (counted) while new connections are tried after its
        /// backoff; the one that publishes gets `onMetaData` and the sequence header again and
        /// starts at the next IDR, timestamps going on from where they were
        /// (``Statistics/reconnects`` counts them). When the tries run out, the next send throws.
        public var reconnect: Reconnect?

        /// The reconnection policy: the first wait, doubling up to the longest, for at most so
        /// many tries in a row — the one type of ``RTSPClient``'s reconnection.
        public typealias Reconnect = RTSPClient.Configuration.Reconnect

        /// The defaults.
        public init() {}
    }

    /// What the publisher sent and dropped.
    public struct Statistics: Sendable, Equatable {
        /// Access units sent.
        public var framesSent = 0
        /// Access units dropped: before the first IDR, and while skipping to the next IDR.
        public var framesDropped = 0
        /// Times the connection could not keep up and the publisher skipped to the next IDR.
        public var skipsToKeyframe = 0
        /// AVC sequence headers sent (1, and one more at each format change and reconnection).
        public var sequenceHeaders = 0
        /// Times a dropped connection was replaced by a new one that publishes
        /// (``Configuration/reconnect``).
        public var reconnects = 0
        /// Audio frames sent (``RTMPPublisher/send(audio:format:timestamp:)``).
        public var audioFramesSent = 0
        /// Audio frames dropped while the connection could not keep up (or was down).
        public var audioFramesDropped = 0
        /// AAC sequence headers sent (one before the first AAC frame, and one more at each
        /// format change and reconnection).
        public var audioSequenceHeaders = 0

        /// No frames yet.
        public init() {}

        /// Counts as given.
        public init(framesSent: Int, framesDropped: Int, skipsToKeyframe: Int, sequenceHeaders: Int, reconnects: Int = 0) {
            self.framesSent = framesSent
            self.framesDropped = framesDropped
            self.skipsToKeyframe = skipsToKeyframe
            self.sequenceHeaders = sequenceHeaders
            self.reconnects = reconnects
        }
    }

    /// The URL published to.
    public let url: RTMPURL
    /// The event loop of every connection the publisher makes (reconnections stay on it).
    let loop: any EventLoop
    /// One connection that publishes: its channel, its handler and the message stream id
    /// `createStream` returned.
    struct Link: Sendable {
        var channel: any Channel
        var handler: NIOLoopBound<RTMPClientHandler>
        var messageStreamId: UInt32
    }

    /// What the sending side keeps (the connection, the video timeline, the first arrival)
    /// under the lock.
    struct State: Sendable {
        var link: Link
        var timeline: RTMPVideoTimeline
        /// The audio half: the AAC sequence header sent on this connection, audio timestamps.
        var audio = RTMPAudioTimeline()
        var finished = false
        var metadataSent = false
        var firstArrival: ContinuousClock.Instant?
        /// Frames ``RTMPPublisher/offer(_:)`` handed to the event loop and not yet written.
        var offered = 0
        /// The reconnection under way, if any.
        var reconnecting: Task<Void, Never>?
        /// True once the reconnection policy's tries ran out: the failure is thrown then.
        var gaveUp = false
    }

    let state: Locked<State>
    let metadata: FLVMetadata?
    let configuration: Configuration
    let logger: Logger

    private init(url: RTMPURL, link: Link, metadata: FLVMetadata?, configuration: Configuration, logger: Logger) {
        self.url = url
        loop = link.channel.eventLoop
        self.metadata = metadata
        self.configuration = configuration
        self.logger = logger
        state = Locked(State(link: link, timeline: RTMPVideoTimeline(messageStreamId: link.messageStreamId, syntax: configuration.syntax)))
    }

    /// The message stream id `createStream` returned (on the current connection).
    public var messageStreamId: UInt32 { state.withLock { $0.link.messageStreamId } }

    /// What was sent and dropped so far.
    public var statistics: Statistics {
        state.withLock { state in
            var statistics = state.timeline.statistics
            statistics.audioFramesSent = state.audio.framesSent
            statistics.audioFramesDropped = state.audio.framesDropped
            statistics.audioSequenceHeaders = state.audio.sequenceHeaders
            return statistics
        }
    }

    /// Connects to `url` and starts publishing its stream key.
    ///
    /// - Parameters:
    ///   - url: `rtmp://HOST[:PORT]/APP/KEY` or `rtmps://…`.
    ///   - group: the event loop group of the connection.
    ///   - metadata: the `onMetaData` sent before the first frame; nil: made from the first
    ///     frame's format (size and frame rate from its SPS).
    ///   - configuration: timeouts, chunk size, buffer bound, syntax, TLS trust.
    ///   - logger: the connection's diagnostics (the module never prints).
    /// - Throws: ``RTMPError``: ``RTMPError/Code/badURL``, ``RTMPError/Code/connectionFailed``,
    ///   ``RTMPError/Code/tls``, ``RTMPError/Code/connectionClosed`` (a close mid-handshake too),
    ///   ``RTMPError/Code/timeout``, ``RTMPError/Code/rejected`` (`_error`, or a `publish`
    ///   refused), ``RTMPError/Code/protocolViolation``.
    public static func connect(to url: String, group: any EventLoopGroup, metadata: FLVMetadata? = nil,
                               configuration: Configuration = Configuration(), logger: Logger = .streamingSilent) async throws -> RTMPPublisher {
        let target = try RTMPURL(url)
        let link = try await open(target, group: group, configuration: configuration, logger: logger)
        return RTMPPublisher(url: target, link: link, metadata: metadata, configuration: configuration, logger: logger)
    }

    /// A connection to `url` that publishes its stream key: `connect`, `releaseStream`,
    /// `FCPublish`, `createStream`, `publish` and its `NetStream.Publish.Start`.
    static func open(_ url: RTMPURL, group: any EventLoopGroup, configuration: Configuration, logger: Logger) async throws -> Link {
        let settings = RTMPClientConnection.Settings(
            connectTimeout: configuration.connectTimeout, commandTimeout: configuration.commandTimeout, chunkSize: configuration.chunkSize,
            writeBufferLimit: configuration.writeBufferLimit, tlsTrust: configuration.tlsTrust, flashVer: configuration.flashVer,
            maximumMessageLength: 1 << 20, fourCcList: configuration.syntax == .enhanced ? ["avc1", "hvc1"] : nil)
        let connection = try await RTMPClientConnection.open(url.description, group: group, settings: settings, logger: logger)
        let target = connection.target
        do {
            try await connection.send([.releaseStream(target.streamKey, transactionId: 2), .fcPublish(target.streamKey, transactionId: 3)])
            let streamId = try await connection.createStream(transactionId: 4)
            try await connection.status(of: .publish(target.streamKey), streamId: streamId, expected: "NetStream.Publish.Start")
            logger.info("\(target): publishing (message stream \(streamId))")
            return Link(channel: connection.channel, handler: connection.handler, messageStreamId: streamId)
        } catch {
            try? await connection.channel.close()
            throw error
        }
    }
}
