import H264
import MediaContainers

/// The bounded queue between an RTMP connection's event loop and the consumer of its video
/// (``RTMPIncomingStream``, ``RTMPPlayer``): at most `limit` events wait; past that, events are
/// dropped and counted, never buffered without bound — and after a dropped event, frames up to
/// the next keyframe too (they could not be decoded), whatever their codec: the frame event and
/// its keyframe flag are the same for H.264 and H.265. The first ending is kept.
final class RTMPEventQueue<Ending: Sendable>: Sendable {
    let stream: AsyncStream<FLVReader.Event>
    private let continuation: AsyncStream<FLVReader.Event>.Continuation
    private let state = Locked<(ending: Ending?, dropped: Int, gate: KeyframeGate)>((nil, 0, KeyframeGate(open: true)))

    init(limit: Int) {
        (stream, continuation) = AsyncStream.makeStream(of: FLVReader.Event.self, bufferingPolicy: .bufferingOldest(max(limit, 1)))
    }

    /// Why the video ended; nil while it goes on.
    var ending: Ending? { state.withLock { $0.ending } }

    /// Events dropped because the consumer fell behind.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Delivers `event`, unless it is a frame after a dropped event and before the next keyframe.
    func deliver(_ event: FLVReader.Event) {
        state.withLock { state in
            if case .frame(let frame) = event, !state.gate.admit(isKeyframe: frame.isKeyframe) {
                state.dropped += 1
                return
            }
            if case .dropped = continuation.yield(event) {
                state.dropped += 1
                state.gate.close()
            }
        }
    }

    /// Ends the sequence (the first ending is kept).
    func end(_ ending: Ending) {
        state.withLock { $0.ending = $0.ending ?? ending }
        continuation.finish()
    }
}
