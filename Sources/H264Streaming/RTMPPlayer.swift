public import H264
public import Logging
public import NIOCore

/// Plays a stream from an RTMP server — nginx-rtmp, SRS, MediaMTX, FFmpeg — as players do
/// (RTMP specification clause 7.2.2.1; FFmpeg's `rtmpproto.c`): the handshake, `connect`,
/// `createStream`, `play`, then the server's video messages as an `AsyncSequence` of `FLVReader`
/// (module `H264`) events — sequence headers (the format), frames (AVCC with 4-byte lengths,
/// decoding and composition time), end of sequence, damaged tags skipped — the same events an
/// ``RTMPIngestServer`` publisher and an FLV file give.
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
    /// One event of the stream's video.
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

        /// The defaults, with `tlsTrust` for an `rtmps://` server's certificate.
        public init(tlsTrust: RTSPTLSTrust = .systemRoots) { self.tlsTrust = tlsTrust }
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
    /// The message stream id `createStream` returned.
    public let messageStreamId: UInt32
    private let channel: any Channel
    private let queue: RTMPEventQueue<Ending>

    private init(url: RTMPURL, messageStreamId: UInt32, channel: any Channel, queue: RTMPEventQueue<Ending>) {
        self.url = url
        self.messageStreamId = messageStreamId
        self.channel = channel
        self.queue = queue
    }

    /// Connects to `url` and plays its stream key.
    ///
    /// - Parameters:
    ///   - url: `rtmp://HOST[:PORT]/APP/KEY` or `rtmps://…`.
    ///   - group: the event loop group of the connection.
    ///   - configuration: timeouts, message bound, buffer bound, TLS trust.
    ///   - logger: the connection's diagnostics (the module never prints).
    /// - Throws: ``RTMPError``: ``RTMPError/Code/badURL``, ``RTMPError/Code/connectionFailed``,
    ///   ``RTMPError/Code/tls``, ``RTMPError/Code/connectionClosed`` (a close mid-handshake too),
    ///   ``RTMPError/Code/timeout``, ``RTMPError/Code/rejected`` (`_error`, or an `onStatus`
    ///   other than `NetStream.Play.Start` to `play`, such as `NetStream.Play.StreamNotFound`,
    ///   in ``RTMPError/statusCode``), ``RTMPError/Code/protocolViolation``.
    public static func connect(to url: String, group: any EventLoopGroup, configuration: Configuration = Configuration(),
                               logger: Logger = .streamingSilent) async throws -> RTMPPlayer {
        let settings = RTMPClientConnection.Settings(
            connectTimeout: configuration.connectTimeout, commandTimeout: configuration.commandTimeout,
            chunkSize: RTMPChunkReader.defaultChunkSize, writeBufferLimit: 1 << 16, tlsTrust: configuration.tlsTrust,
            flashVer: configuration.flashVer, maximumMessageLength: configuration.maximumMessageLength)
        let connection = try await RTMPClientConnection.open(url, group: group, settings: settings, logger: logger)
        let target = connection.target, channel = connection.channel
        let queue = RTMPEventQueue<Ending>(limit: configuration.bufferLimit)
        do {
            let streamId = try await connection.createStream(transactionId: 2)
            try await connection.status(of: .play(target.streamKey), streamId: streamId, expected: "NetStream.Play.Start",
                                        skipping: playPrelude) { handler in
                var video = RTMPVideoReader()
                handler.playback = { playback in
                    switch playback {
                    case .video(let message): video.events(of: message).forEach(queue.deliver)
                    case .ended(let failure):
                        video.finish().forEach(queue.deliver)
                        queue.end(failure.map(Ending.failed) ?? .unpublished)
                        channel.close(promise: nil)
                    }
                }
            }
            logger.info("\(target): playing (message stream \(streamId))")
            return RTMPPlayer(url: target, messageStreamId: streamId, channel: channel, queue: queue)
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// Why the stream ended; nil while it goes on.
    public var ending: Ending? { queue.ending }

    /// Events dropped because the consumer fell ``Configuration/bufferLimit`` behind (and the
    /// frames up to the next keyframe after them).
    public var droppedEvents: Int { queue.dropped }

    /// Ends the play: the sequence ends after the events delivered (``Ending/stopped``), the
    /// connection closes.
    public func stop() {
        queue.end(.stopped)
        channel.close(promise: nil)
    }

    /// The events as the queue holds them (``RelaySource``'s).
    var events: AsyncStream<Element> { queue.stream }

    /// The events, in arrival order.
    public func makeAsyncIterator() -> AsyncStream<Element>.AsyncIterator { queue.stream.makeAsyncIterator() }
}
