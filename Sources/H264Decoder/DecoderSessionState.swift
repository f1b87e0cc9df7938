import H264
import H264SessionCore
import Synchronization

/// What a ``DecoderSession`` keeps behind its one lock: the lifecycle, the configuration, the
/// libavcodec decoder once open, the hardware in use and the current format. Outputs, the
/// `frames` sequence and the queue's error slot are the session's `OutputSink`; the queued
/// access units are its `JobQueue`.
struct DecoderSessionState: Sendable {
    var lifecycle = SessionLifecycle(configureWhileRunning: "the session is decoding: configure before the first access unit")
    var configuration: DecoderConfiguration
    var decoder: DecoderBox?
    var hardwareAccelerationInUse: DecoderConfiguration.HardwareAcceleration?
    /// `DecoderSession.formatDescription`.
    var format: FormatDescription?
}

/// How many access units libavcodec rejected (``DecoderSession/damagedAccessUnitCount``),
/// counted on the decoding queue without a lock.
final class DamagedCount: Sendable {
    let count = Atomic<Int>(0)
}

extension DecoderSession.State {
    /// The decoder's name for a state of the shared lifecycle (`running` is `decoding`).
    init(_ state: SessionLifecycle.State) {
        switch state {
        case .created: self = .created
        case .configured: self = .configured
        case .running: self = .decoding
        case .invalidated: self = .invalidated
        }
    }
}
