import H264
package import H264SessionCore

/// What an ``EncoderSession`` keeps behind its one lock: the lifecycle, the configuration in
/// force, the size, the encoders (current and prewarmed) and the last accepted time stamp.
/// Outputs, the `frames` sequence and the queue's error slot are the session's
/// `OutputSink`; the queued frames are its `JobQueue`.
package struct EncoderSessionState: SessionSharedState {
    package var lifecycle = SessionLifecycle(
        configureWhileRunning: "the session is prepared: only averageBitRate and dataRateLimits can change (setAverageBitRate, setDataRateLimits)")
    package var configuration: EncoderConfiguration
    var width: Int
    var height: Int
    var current: Lane?
    var prewarmed: Lane?
    /// The last accepted frame's presentation time stamp: the next must be later.
    var lastPresentationTimeStamp: Duration?
}

/// A frame accepted by `encode`, waiting for the encoding queue.
package struct FrameJob: Sendable {
    let lane: Lane
    let frame: VideoFrame
    let presentationTimeStamp: Duration
    let duration: Duration
    let forceKeyframe: Bool
}

extension EncoderSession.State: SessionStateNames {
    /// The encoder's name for the shared lifecycle's `running`.
    package static var running: Self { .prepared }
}

extension EncoderConfiguration: SessionConfiguration {}

/// The calls both sessions share (configure, frames, the flushes, invalidate) are written once
/// in `CodecSession`.
extension EncoderSession: CodecSession {}
