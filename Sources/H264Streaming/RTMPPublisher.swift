public import H264
public import Logging
public import NIOCore
import NIOPosix

/// Publishes H.264 to an RTMP server — nginx-rtmp, SRS, MediaMTX, FFmpeg, YouTube, Twitch —
/// as encoders do (RTMP specification clause 7.2; FFmpeg's `rtmpproto.c`): the handshake,
/// `connect`, `releaseStream`, `FCPublish`, `createStream`, `publish` (live), then
/// `@setDataFrame onMetaData`, the AVC sequence header (the avcC) and the coded frames as FLV
/// video tag bodies; ``finish()`` sends the end of sequence, `FCUnpublish` and `deleteStream`.
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
        /// The video tag syntax: legacy FLV (`CodecID` 7, what every server reads; the default)
        /// or Enhanced RTMP (`avc1`).
        public var syntax: FLVVideoTag.Syntax = .legacy
        /// What an `rtmps://` server's certificate must be (the one trust type of RTSPS).
        public var tlsTrust: RTSPTLSTrust = .systemRoots
        /// The `flashVer` of `connect`.
        public var flashVer = "FMLE/3.0 (compatible; swift-h264)"

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
        /// AVC sequence headers sent (1, and one more at each format change).
        public var sequenceHeaders = 0

        /// No frames yet.
        public init() {}

        /// Counts as given.
        public init(framesSent: Int, framesDropped: Int, skipsToKeyframe: Int, sequenceHeaders: Int) {
            self.framesSent = framesSent
            self.framesDropped = framesDropped
            self.skipsToKeyframe = skipsToKeyframe
            self.sequenceHeaders = sequenceHeaders
        }
    }

    /// The URL published to.
    public let url: RTMPURL
    /// The message stream id `createStream` returned.
    public let messageStreamId: UInt32
    let channel: any Channel
    let handler: NIOLoopBound<RTMPClientHandler>
    /// What the sending side keeps (the video timeline, the first arrival) under the lock.
    struct State: Sendable {
        var timeline: RTMPVideoTimeline
        var finished = false
        var metadataSent = false
        var firstArrival: ContinuousClock.Instant?
        /// Frames ``RTMPPublisher/offer(_:)`` handed to the event loop and not yet written.
        var offered = 0
    }

    let state: Locked<State>
    let metadata: FLVMetadata?
    private let configuration: Configuration
    let logger: Logger

    private init(url: RTMPURL, messageStreamId: UInt32, channel: any Channel, handler: NIOLoopBound<RTMPClientHandler>,
                 metadata: FLVMetadata?, configuration: Configuration, logger: Logger) {
        self.url = url
        self.messageStreamId = messageStreamId
        self.channel = channel
        self.handler = handler
        self.metadata = metadata
        self.configuration = configuration
        self.logger = logger
        state = Locked(State(timeline: RTMPVideoTimeline(messageStreamId: messageStreamId, syntax: configuration.syntax)))
    }

    /// What was sent and dropped so far.
    public var statistics: Statistics { state.withLock { $0.timeline.statistics } }

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
        let loop = group.next()
        let random = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let handler = try await loop.submit {
            NIOLoopBound(RTMPClientHandler(url: target.description, time: 0, random: random, logger: logger), eventLoop: loop)
        }.get()
        let trust = configuration.tlsTrust, limit = max(configuration.writeBufferLimit, 2)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .channelOption(.writeBufferWaterMark, value: .init(low: limit / 2, high: limit))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if target.isSecure { try channel.pipeline.syncOperations.addHandler(trust.makeHandler(host: target.host)) }
                        try channel.pipeline.syncOperations.addHandler(handler.value)
                    }
                }
                .connect(host: target.host, port: target.port).get()
        } catch {
            throw RTMPError(.connectionFailed, "\(target): cannot connect to \(target.host):\(target.port) (\(error))")
        }
        do {
            let timeout = configuration.commandTimeout
            do {
                try await loop.flatSubmit { handler.value.startHandshake(timeout: timeout, on: loop) }.get()
            } catch let error as RTMPError where target.isSecure && error.code == .connectionClosed {
                let caught = try? await loop.submit { handler.value.caughtError.map { "\($0)" } }.get()
                throw caught.flatMap { $0 }.map { RTMPError(.tls, "\(target): \(RTSPTLSTrust.describe(handshakeFailure: $0))") } ?? error
            }
            func call(_ command: RTMPCommand) async throws -> RTMPCommand {
                let answer = try await loop.flatSubmit {
                    handler.value.send(command, answered: true, timeout: timeout, on: loop)
                }.get()
                guard answer.name == "_result" else {
                    throw RTMPError(.rejected, "\(target): \(command.name): \(answer.statusCode ?? answer.name)"
                                    + (answer.statusDescription.map { " (\($0))" } ?? ""), statusCode: answer.statusCode)
                }
                return answer
            }
            try await loop.submit {
                do throws(H264Error) { try handler.value.setChunkSize(configuration.chunkSize) } catch {
                    throw RTMPError(.invalidUse, "\(target): \(error)", underlying: error)
                }
            }.get()
            _ = try await call(.connect(app: target.app, tcUrl: target.tcUrl, flashVer: configuration.flashVer))
            try await loop.submit {
                for command in [RTMPCommand.releaseStream(target.streamKey, transactionId: 2), .fcPublish(target.streamKey, transactionId: 3)] {
                    _ = handler.value.send(command, answered: false, timeout: timeout, on: loop)
                }
            }.get()
            let created = try await call(.createStream(transactionId: 4))
            guard let number = created.arguments.first?.number, let streamId = UInt32(exactly: number) else {
                throw RTMPError(.protocolViolation, "\(target): createStream's _result carries no stream id")
            }
            let status = try await loop.flatSubmit {
                let status = handler.value.awaitStatus(timeout: timeout, what: "publish", on: loop)
                _ = handler.value.send(.publish(target.streamKey), streamId: streamId, answered: false, timeout: timeout, on: loop)
                return status
            }.get()
            guard status.statusCode == "NetStream.Publish.Start" else {
                throw RTMPError(.rejected, "\(target): publish: \(status.statusCode ?? "no code")"
                                + (status.statusDescription.map { " (\($0))" } ?? ""), statusCode: status.statusCode)
            }
            logger.info("\(target): publishing (message stream \(streamId))")
            return RTMPPublisher(url: target, messageStreamId: streamId, channel: channel, handler: handler, metadata: metadata,
                                 configuration: configuration, logger: logger)
        } catch {
            try? await channel.close()
            throw error
        }
    }
}
