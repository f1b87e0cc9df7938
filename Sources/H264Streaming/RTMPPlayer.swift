public import H264
public import Logging
public import NIOCore
public import MediaContainers
public import RTMPMessages

/// Plays a stream from an RTMP server — nginx-rtmp, SRS, MediaMTX, FFmpeg — as players do
/// (RTMP specification clause 7.2.2.1; FFmpeg's `rtmpproto.c`): the handshake, `connect`,
/// `createStream`, `play` and Set Buffer Length, then the server's video and audio messages as
/// an `AsyncSequence` of `FLVReader` (module `MediaContainers`) events of any codec — video
/// format changes (each sequence header's `VideoFormatDescription`), frames of both media through
/// the one `.frame` case (video `CompressedFrame`s with 4-byte lengths, decoding and composition
/// time; AAC and G.711 frames with their `AudioFormatDescription`), end of sequence, damaged
/// tags skipped — the same events an ``RTMPIngestServer`` publisher and an FLV file give.
///
/// ```swift
/// let player = try await RTMPPlayer.connect(to: "rtmp://127.0.0.1/live/key", group: group)
/// for await event in player { … }        // ends when the publisher stops (player.ending)
/// ```
///
/// The connection acknowledges the server's window, answers pings and follows its chunk size;
/// messages above ``Configuration/maximumMessageLength`` break the connection. The sequence ends
/// at `NetStream.Play.UnpublishNotify`, `…Stop`, `…Complete` or Stream EOF (``Ending/unpublished``),
/// at ``stop()``, or when the connection fails (``Ending/failed(_:)``). At most
/// ``Configuration/bufferLimit`` events wait for the consumer; past that, events are dropped and
/// counted (``droppedEvents``), and the frames after a dropped event up to the next keyframe.
public final class RTMPPlayer: AsyncSequence, Sendable {
    /// One event of the stream's video and audio.
    public typealias Element = FLVReader.Event

    /// How the player connects and buffers.
    public struct Configuration: Sendable {
        /// The most time for the TCP (and TLS) connection. Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// The most time for the handshake and for each answer (`_result`, `onStatus` of `play`). Default 10 s.
        public var commandTimeout: Duration = .seconds(10)
        /// The longest message accepted from the server (a keyframe's video message). Default 8 MiB.
        public var maximumMessageLength = RTMPChunkReader.defaultMaximumMessageLength
        /// The events that may wait for the consumer. Default 1024.
        public var bufferLimit = 1024
        /// What an `rtmps://` server's certificate must be (the one trust type of RTSPS).
        public var tlsTrust: RTSPTLSTrust = .systemRoots
        /// The `flashVer` of `connect`.
        public var flashVer = "LNX 9,0,124,2"
        /// Whether and how to play again when the connection drops (not when the publisher
        /// stops: that ends the events): nil (the default), never. With a policy, new
        /// connections are tried after its backoff and the one that plays goes on in the same
        /// events (a sequence header, then frames from a keyframe); when the tries run out, the
        /// events end with the failure.
        public var reconnect: Reconnect?

        /// The reconnection policy: the one type of ``RTSPClient``'s reconnection.
        public typealias Reconnect = RTSPClient.Configuration.Reconnect

        /// The defaults, with `tlsTrust` for an `rtmps://` server's certificate and the
        /// `reconnect` policy.
        public init(tlsTrust: RTSPTLSTrust = .systemRoots, reconnect: Reconnect? = nil) {
            self.tlsTrust = tlsTrust
            self.reconnect = reconnect
        }
    }

    /// Why the stream ended.
    public enum Ending: Sendable, Equatable {
        /// The server said the stream ended (the publisher stopped).
        case unpublished
        /// ``RTMPPlayer/stop()`` ended it.
        case stopped
        /// The connection failed: the server closed it, broke RTMP, or ended the play with an
        /// error status.
        case failed(RTMPError)
    }

    /// The `onStatus` codes a server may send before the answer to `play` (nginx-rtmp's
    /// `play_restart`, a publisher starting).
    static let playPrelude: Set<String> = ["NetStream.Play.Reset", "NetStream.Play.PublishNotify"]

    /// The URL played.
    public let url: RTMPURL
    private let queue: FrameEventQueue<FLVReader.Event, Ending>
    private let configuration: Configuration
    private let logger: Logger
    /// The connection playing now, whether ``stop()`` was called, and the reconnection under way.
    private let state = Locked<(link: Link?, stopped: Bool, reconnecting: Task<Void, Never>?)>((nil, false, nil))

    /// One connection that plays: its channel, its handler, the message stream id of `createStream`.
    private struct Link: Sendable {
        var channel: any Channel
        var handler: NIOLoopBound<RTMPClientHandler>
        var messageStreamId: UInt32
    }

    /// The buffer length the player announces after `play` (Set Buffer Length, user control
    /// event 3), in milliseconds: 3000, FFmpeg's default.
    public static let bufferLength: UInt32 = 3000

    private init(url: RTMPURL, configuration: Configuration, logger: Logger) {
        self.url = url
        self.configuration = configuration
        self.logger = logger
        queue = FrameEventQueue(limit: configuration.bufferLimit, keyframeFlag: \.keyframeFlag)
    }

    /// The message stream id `createStream` returned (on the current connection).
    public var messageStreamId: UInt32 { state.withLock { $0.link?.messageStreamId ?? 0 } }

    /// Connects to `url` and plays its stream key.
    ///
    /// - Parameters:
    ///   - url: `rtmp://HOST[:PORT]/APP/KEY` or `rtmps://…`.
    ///   - group: the event loop group of the connection.
    ///   - configuration: timeouts, message bound, buffer bound, TLS trust, reconnection.
    ///   - logger: the connection's diagnostics (the module never prints).
    /// - Throws: ``RTMPError``: ``RTMPError/Code/badURL``, ``RTMPError/Code/connectionFailed``,
    ///   ``RTMPError/Code/tls``, ``RTMPError/Code/connectionClosed`` (a close mid-handshake too),
    ///   ``RTMPError/Code/timeout``, ``RTMPError/Code/rejected`` (`_error`, or an `onStatus`
    ///   other than `NetStream.Play.Start` to `play`, such as `NetStream.Play.StreamNotFound`,
    ///   in ``RTMPError/statusCode``), ``RTMPError/Code/protocolViolation``.
    public static func connect(to url: String, group: any EventLoopGroup, configuration: Configuration = Configuration(),
                               logger: Logger = .streamingSilent) async throws -> RTMPPlayer {
        let player = RTMPPlayer(url: try RTMPURL(url), configuration: configuration, logger: logger)
        let link = try await player.open(group: group)
        player.state.withLock { $0.link = link }
        return player
    }

    /// A connection that plays the stream key, its video and audio going to the queue: `connect`,
    /// `createStream`, `play` (its `NetStream.Play.Start`) and Set Buffer Length.
    private func open(group: any EventLoopGroup) async throws -> Link {
        let settings = RTMPClientConnection.Settings(
            connectTimeout: configuration.connectTimeout, commandTimeout: configuration.commandTimeout,
            chunkSize: RTMPChunkReader.defaultChunkSize, writeBufferLimit: 1 << 16, tlsTrust: configuration.tlsTrust,
            flashVer: configuration.flashVer, maximumMessageLength: configuration.maximumMessageLength)
        let connection = try await RTMPClientConnection.open(url.description, group: group, settings: settings, logger: logger)
        let target = connection.target, channel = connection.channel, queue = queue
        do {
            let streamId = try await connection.createStream(transactionId: 2)
            // Set Buffer Length right after play, as FFmpeg and Flash players send it.
            let buffer = RTMPControlMessage.userControl(.setBufferLength(messageStreamId: streamId, milliseconds: Self.bufferLength))
            try await connection.status(of: .play(target.streamKey), streamId: streamId, expected: "NetStream.Play.Start",
                                        skipping: Self.playPrelude, followedBy: [buffer]) { [self] handler in
                var media = RTMPMediaReader()
                handler.playback = { [unowned handler, self] playback in // it holds the closure until it leaves the channel
                    switch playback {
                    case .media(let message): media.events(of: message).forEach(queue.deliver)
                    case .ended(let failure):
                        media.finish().forEach(queue.deliver)
                        let reconnecting = failure.map { reconnectIfAllowed(after: $0, on: channel.eventLoop) } ?? false
                        if !reconnecting { queue.end(failure.map(Ending.failed) ?? .unpublished) }
                        Self.hangUp(handler, messageStreamId: streamId, on: channel.eventLoop)
                    }
                }
            }
            logger.info("\(target): playing (message stream \(streamId))")
            return Link(channel: channel, handler: connection.handler, messageStreamId: streamId)
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// Starts a reconnection after `failure` when the configuration asks for one and the play
    /// was not stopped; false otherwise (the events end then).
    private func reconnectIfAllowed(after failure: RTMPError, on loop: any EventLoop) -> Bool {
        guard let policy = configuration.reconnect else { return false }
        return state.withLock { state in
            guard !state.stopped else { return false }
            guard state.reconnecting == nil else { return true }
            logger.warning("\(url): \(failure); playing again after \(policy.initialDelay)")
            state.reconnecting = Task { [self] in await reconnect(policy: policy, on: loop) }
            return true
        }
    }

    /// Tries new connections with the policy's backoff until one plays (its sequence header and
    /// frames follow in the same events), the tries run out (the events end with the
    /// disconnection's failure), or ``stop()`` cancels it.
    private func reconnect(policy: Configuration.Reconnect, on loop: any EventLoop) async {
        var delay = policy.initialDelay, attempts = 0
        var lastError = RTMPError(.connectionClosed, "\(url): the server closed the connection")
        while !Task.isCancelled {
            attempts += 1
            do { try await Task.sleep(for: delay) } catch { break }
            do {
                let link = try await open(group: loop)
                let installed = state.withLock { state in
                    guard !state.stopped else { return false }
                    state.link = link
                    state.reconnecting = nil
                    return true
                }
                if !installed { try? await link.channel.close() }
                logger.info("\(url): playing again after \(attempts) attempt(s)")
                return
            } catch let error as RTMPError {
                lastError = error
                logger.info("\(url): reconnection attempt \(attempts) failed: \(error)")
            } catch {
                logger.info("\(url): reconnection attempt \(attempts) failed: \(error)")
            }
            if let maximum = policy.maximumAttempts, attempts >= maximum { break }
            delay = Swift.min(delay * 2, policy.maximumDelay)
        }
        state.withLock { $0.reconnecting = nil }
        queue.end(.failed(lastError))
    }

    /// Why the stream ended; nil while it goes on.
    public var ending: Ending? { queue.ending }

    /// Events dropped because the consumer fell ``Configuration/bufferLimit`` behind (and the
    /// frames up to the next keyframe after them).
    public var droppedEvents: Int { queue.dropped }

    /// Ends the play: the sequence ends after the events delivered (``Ending/stopped``);
    /// `deleteStream` goes to the server and the connection closes once it is written (and the
    /// server has closed its side, at most 2 s later). Returns at once.
    public func stop() {
        queue.end(.stopped)
        let (link, reconnecting) = state.withLock { state in
            state.stopped = true
            return (state.link, state.reconnecting)
        }
        reconnecting?.cancel()
        guard let link else { return }
        let handler = link.handler, loop = link.channel.eventLoop, streamId = link.messageStreamId
        loop.execute { Self.hangUp(handler.value, messageStreamId: streamId, on: loop) }
    }

    /// `deleteStream`, then the connection closed once it is written (see
    /// `RTMPClientHandler.closeGracefully`); on the event loop.
    private static func hangUp(_ handler: RTMPClientHandler, messageStreamId: UInt32, on loop: any EventLoop) {
        _ = handler.send(.deleteStream(messageStreamId, transactionId: 3), answered: false, timeout: .seconds(2), on: loop)
        _ = handler.closeGracefully(timeout: .seconds(2), on: loop)
    }

    /// The events as the queue holds them (``RelaySource``'s).
    var events: AsyncStream<Element> { queue.stream }

    /// The events, in arrival order.
    public func makeAsyncIterator() -> AsyncStream<Element>.AsyncIterator { queue.stream.makeAsyncIterator() }
}
