import H264
package import H264SessionCore
import Synchronization

/// What a ``DecoderSession`` keeps behind its one lock: the lifecycle, the configuration, the
/// libavcodec decoder once open, the hardware in use and the current format. Outputs, the
/// `frames` sequence and the queue's error slot are the session's `OutputSink`; the queued
/// access units are its `JobQueue`.
package struct DecoderSessionState: SessionSharedState {
    package var lifecycle = SessionLifecycle(configureWhileRunning: "the session is decoding: configure before the first access unit")
    package var configuration: DecoderConfiguration
    var decoder: DecoderBox?
    var hardwareAccelerationInUse: DecoderConfiguration.HardwareAcceleration?
    /// `DecoderSession.formatDescription` or `DecoderSession.hevcFormatDescription`.
    var format: StreamFormat?
    /// The codec libavcodec was opened for; nil until the first access unit.
    var codec: VideoCodec?
}

/// How many access units libavcodec rejected (``DecoderSession/damagedAccessUnitCount``),
/// counted on the decoding queue without a lock.
final class DamagedCount: Sendable {
    let count = Atomic<Int>(0)
}

extension DecoderSession.State: SessionStateNames {
    /// The decoder's name for the shared lifecycle's `running`.
    package static var running: Self { .decoding }
}

extension DecoderConfiguration: SessionConfiguration {}

/// The calls both sessions share (configure, frames, the flushes, invalidate) are written once
/// in `CodecSession`.
extension DecoderSession: CodecSession {}
