public import H264
public import NIOCore
public import MediaContainers

/// A publisher pushing to an ``RTMPIngestServer`` (OBS, `ffmpeg -f flv rtmp://…`,
/// `rtmp2sink`): the application and stream key it published to, and its video and audio as an
/// `AsyncSequence` of `FLVReader` (module `MediaContainers`) events of any codec — video format
/// changes (each sequence header's `VideoFormatDescription`), frames of both media through the
/// one `.frame` case (video `CompressedFrame`s with 4-byte lengths, decoding time and composition
/// time; AAC and G.711 frames with their `AudioFormatDescription`), end of sequence, damaged tags
/// skipped — the same events an FLV file gives.
///
/// The sequence ends when the publisher does (``ending``): `FCUnpublish`/`deleteStream`, a
/// closed connection, a broken chunk stream, ``stop()`` or the server's shutdown. At most
/// ``bufferLimit`` events wait for the consumer; past that, events are dropped and counted
/// (``droppedEvents``) — and the frames after a dropped event up to the next keyframe — never
/// buffered without bound.
public final class RTMPIncomingStream: AsyncSequence, Sendable {
    /// One event of the publisher's video and audio.
    public typealias Element = FLVReader.Event

    /// Why a publish ended.
    public enum Ending: Sendable, Equatable {
        /// The publisher sent `FCUnpublish`, `deleteStream` or `closeStream`.
        case unpublished
        /// The connection closed.
        case connectionClosed
        /// The publisher broke RTMP (the error says how).
        case protocolViolation(MediaError)
        /// ``RTMPIncomingStream/stop()`` or the server's shutdown ended it.
        case stopped
    }

    /// The events that may wait for the consumer.
    public static let bufferLimit = 1024

    /// The application of `connect` (`live`).
    public let app: String
    /// The stream key of `publish`.
    public let streamKey: String
    /// The publisher's address.
    public let remoteAddress: SocketAddress?
    private let queue = FrameEventQueue<FLVReader.Event, Ending>(limit: bufferLimit, keyframeFlag: \.keyframeFlag)
    private let stopPublish: @Sendable () -> Void

    init(app: String, streamKey: String, remoteAddress: SocketAddress?, stop: @escaping @Sendable () -> Void) {
        self.app = app
        self.streamKey = streamKey
        self.remoteAddress = remoteAddress
        stopPublish = stop
    }

    /// Why the publish ended; nil while it goes on.
    public var ending: Ending? { queue.ending }

    /// Events dropped because the consumer fell ``bufferLimit`` behind (and the frames up to the
    /// next keyframe after them).
    public var droppedEvents: Int { queue.dropped }

    /// Ends the publish: the connection closes, the sequence ends after the events delivered.
    public func stop() { stopPublish() }

    /// The events as the queue holds them (``RelaySource``'s).
    var events: AsyncStream<Element> { queue.stream }

    /// The events, in arrival order.
    public func makeAsyncIterator() -> AsyncStream<Element>.AsyncIterator { queue.stream.makeAsyncIterator() }

    /// Delivers `event`.
    func deliver(_ event: Element) { queue.deliver(event) }

    /// Ends the sequence (the first ending is kept).
    func end(_ ending: Ending) { queue.end(ending) }
}
