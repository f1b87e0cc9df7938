import H264

/// The bounded queue between an RTMP connection's event loop and the consumer of its video
/// (``RTMPIncomingStream``, ``RTMPPlayer``): at most `limit` events wait; past that, events are
/// dropped and counted, never buffered without bound. The first ending is kept.
final class RTMPEventQueue<Ending: Sendable>: Sendable {
    let stream: AsyncStream<FLVReader.Event>
    private let continuation: AsyncStream<FLVReader.Event>.Continuation
    private let state = Locked<(ending: Ending?, dropped: Int)>((nil, 0))

    init(limit: Int) {
        (stream, continuation) = AsyncStream.makeStream(of: FLVReader.Event.self, bufferingPolicy: .bufferingOldest(max(limit, 1)))
    }

    /// Why the video ended; nil while it goes on.
    var ending: Ending? { state.withLock { $0.ending } }

    /// Events dropped because the consumer fell behind.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Delivers `event`.
    func deliver(_ event: FLVReader.Event) {
        if case .dropped = continuation.yield(event) { state.withLock { $0.dropped += 1 } }
    }

    /// Ends the sequence (the first ending is kept).
    func end(_ ending: Ending) {
        state.withLock { $0.ending = $0.ending ?? ending }
        continuation.finish()
    }
}
