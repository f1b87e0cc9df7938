import MediaCore
import MediaContainers
import RTP

/// The bounded queue between a connection's event loop and the reader of its events — the one
/// policy of every `AsyncSequence` of received frames in this module (``RTSPClient``, ``RTSPPublisher``,
/// ``RTPReceiver``, ``RTMPPlayer``, ``RTMPIncomingStream``): at most `limit` events wait; past
/// that, events are dropped and counted, never buffered without bound — and after a dropped
/// event, frames up to the next keyframe too (`KeyframeGate`: they could not be decoded), so the
/// reader never gets a broken GOP. The first ending is kept.
final class FrameEventQueue<Event: Sendable, Ending: Sendable>: Sendable {
    let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let state = Locked<(ending: Ending?, dropped: Int, gate: KeyframeGate)>((nil, 0, KeyframeGate(open: true)))
    /// The keyframe flag of a frame event; nil for any other event.
    private let keyframeFlag: @Sendable (Event) -> Bool?

    /// A queue of at most `limit` events (at least 1); `keyframeFlag` tells frame events (their
    /// keyframe flag) from the others (nil).
    init(limit: Int, keyframeFlag: @escaping @Sendable (Event) -> Bool?) {
        (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingOldest(max(limit, 1)))
        self.keyframeFlag = keyframeFlag
    }

    /// Why the events ended; nil while they go on.
    var ending: Ending? { state.withLock { $0.ending } }

    /// Events dropped because the reader fell behind, and the frames after them up to the next keyframe.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Delivers `event`, unless it is a frame after a dropped event and before the next keyframe.
    func deliver(_ event: Event) {
        state.withLock { state in
            if let isKeyframe = keyframeFlag(event), !state.gate.admit(isKeyframe: isKeyframe) {
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

    /// Delivers `event` (``deliver(_:)``), as an `AsyncStream.Continuation` is yielded to.
    func yield(_ event: Event) { deliver(event) }

    /// Ends the sequence without an ending of its own (the owner keeps why).
    func finish() { continuation.finish() }

    /// Called once the sequence has ended: finished, or its reader gone (cancelled).
    var onTermination: (@Sendable (AsyncStream<Event>.Continuation.Termination) -> Void)? {
        get { continuation.onTermination }
        set { continuation.onTermination = newValue }
    }
}

extension FLVReader.Event {
    /// The keyframe flag of a video frame event; nil for any other event — audio frames too:
    /// each is a keyframe, and must not reopen the gate in the middle of a video GOP.
    var keyframeFlag: Bool? { if case .frame(let frame) = self, frame.audioFormat == nil { frame.isKeyframe } else { nil } }
}

extension RTSPClient.Event {
    /// The keyframe flag of a frame event; nil for any other event.
    var keyframeFlag: Bool? { if case .frame(let received) = self { received.frame.isKeyframe } else { nil } }
}

extension VideoRTPDepacketizer.Event {
    /// The keyframe flag of a frame event; nil for any other event.
    var keyframeFlag: Bool? { if case .frame(let received) = self { received.frame.isKeyframe } else { nil } }
}
