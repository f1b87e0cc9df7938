public import H264
public import HEVC
public import NIOCore
public import RTP

/// A publisher recording to a record path of an ``RTSPServer`` (RFC 2326 record mode; ``RTSPServer/mountRecording(_:authentication:)``, ``RTSPRecordServer``): the stream it
/// announced, and the events of its RTP packets as they arrive, depacketized (frames with their
/// RTP timestamps, format changes, losses, diagnostics), as an `AsyncSequence`. An H.264 stream
/// (the SDP's `H264` rtpmap, RFC 6184) and an H.265 one (`H265`, RFC 7798) give the same
/// `.frame` events (``codec`` says which); a frame's presentation time is its RTP timestamp as
/// the time since the first one (unwrapped across 2³²).
///
/// The sequence ends when the recording does (``ending`` says why): the publisher's TEARDOWN
/// or closed connection (for UDP, once its last packets have had a moment to arrive), the
/// server's idle timeout, ``stop()``, or the server's shutdown. The depacketizer is flushed
/// first, so the last access unit is delivered.
public final class RTSPPublisher: AsyncSequence, Sendable {
    /// One event of the publisher's stream, of either codec: `VideoRTPDepacketizer`'s events.
    public typealias Event = VideoRTPDepacketizer.Event

    /// One event of the publisher's stream.
    public typealias Element = Event

    /// Why a recording ended.
    public enum Ending: Sendable, Equatable {
        /// The publisher sent TEARDOWN.
        case teardown
        /// The publisher's connection closed.
        case connectionClosed
        /// No packet came for the server's idle timeout.
        case idle
        /// ``RTSPPublisher/stop()`` or the server's shutdown ended it.
        case stopped
    }

    /// The SDP of the publisher's ANNOUNCE.
    public let sessionDescription: SessionDescription
    /// The publisher's address (of its RTSP connection).
    public let remoteAddress: SocketAddress?
    /// The events waiting for the reader: at most ``bufferLimit``; past that, events are
    /// dropped (``droppedEvents``) and frames up to the next keyframe with them.
    private let queue = FrameEventQueue<Element, Ending>(limit: RTSPPublisher.bufferLimit, keyframeFlag: \.keyframeFlag)
    private let state = Locked(RTPReceptionStatistics())
    private let stopRecording: @Sendable () -> Void

    init(sessionDescription: SessionDescription, remoteAddress: SocketAddress?, stop: @escaping @Sendable () -> Void) {
        self.sessionDescription = sessionDescription
        self.remoteAddress = remoteAddress
        stopRecording = stop
    }

    /// The format of the SDP's `sprop-parameter-sets`; nil without them (they then come in band)
    /// and for an H.265 stream.
    public var formatDescription: FormatDescription? { codec == .h264 ? try? sessionDescription.formatDescription() : nil }

    /// The audio track the publisher announced (the SDP's `m=audio` section, of a codec this
    /// package reads); nil without one. Its frames are `.frame` events whose format is `.audio`.
    public var audioMedia: AudioMediaDescription? { sessionDescription.audio }

    /// The coding standard the SDP announced: H.265 for an `H265` rtpmap, else H.264.
    public var codec: VideoCodec { sessionDescription.codec }

    /// Why the recording ended; nil while it goes on.
    public var ending: Ending? { queue.ending }

    /// The depacketizer's counts so far (final once the sequence has ended).
    public var statistics: RTPReceptionStatistics { state.withLock { $0 } }

    /// The events that may wait for the reader: past them, events are dropped, and the frames
    /// after a dropped one up to the next keyframe too (never a broken GOP).
    public static let bufferLimit = 1024

    /// Events dropped because the reader fell ``bufferLimit`` behind, with the frames after
    /// them up to the next keyframe.
    public var droppedEvents: Int { queue.dropped }

    /// Ends the recording (the sequence ends after the events already delivered).
    public func stop() { stopRecording() }

    /// The events, in arrival order.
    public func makeAsyncIterator() -> AsyncStream<Element>.AsyncIterator { queue.stream.makeAsyncIterator() }

    /// Delivers `events` and the depacketizer's counts.
    func deliver(_ events: [Element], statistics: RTPReceptionStatistics) {
        state.withLock { $0 = statistics }
        for event in events { queue.deliver(event) }
    }

    /// Ends the sequence.
    func end(_ ending: Ending) {
        queue.end(ending)
    }
}
