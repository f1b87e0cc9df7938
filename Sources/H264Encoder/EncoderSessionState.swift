import H264
import H264SessionCore

/// What an ``EncoderSession`` keeps behind its one lock: the lifecycle, the configuration in
/// force, the size, the encoders (current and prewarmed) and the last accepted time stamp.
/// Outputs, the `frames` sequence and the queue's error slot are the session's
/// `OutputSink`; the queued frames are its `JobQueue`.
struct EncoderSessionState: Sendable {
    var lifecycle = SessionLifecycle(
        configureWhileRunning: "the session is prepared: only averageBitRate and dataRateLimits can change (setAverageBitRate, setDataRateLimits)")
    var configuration: EncoderConfiguration
    var width: Int
    var height: Int
    var current: Lane?
    var prewarmed: Lane?
    /// The last accepted frame's presentation time stamp: the next must be later.
    var lastPresentationTimeStamp: Duration?
}

/// A frame accepted by `encode`, waiting for the encoding queue.
struct FrameJob: Sendable {
    let lane: Lane
    let frame: VideoFrame
    let presentationTimeStamp: Duration
    let duration: Duration
    let forceKeyframe: Bool
}

extension EncoderSession.State {
    /// The encoder's name for a state of the shared lifecycle (`running` is `prepared`).
    init(_ state: SessionLifecycle.State) {
        switch state {
        case .created: self = .created
        case .configured: self = .configured
        case .running: self = .prepared
        case .invalidated: self = .invalidated
        }
    }
}
