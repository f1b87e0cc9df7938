public import MediaCore
import NIOCore

/// How far a ``LiveSink`` (or any reader of a ``LiveFrameStream``) may fall behind its
/// ``Broadcaster`` before it is cut back to the next keyframe.
///
/// The frames waiting for a slow reader are at most ``byteLimit`` bytes (their
/// `CompressedFrame.data`) and ``frameLimit`` frames. One more frame past either limit drops
/// every waiting frame and the frames after them up to the next keyframe (counted in
/// ``LiveFrameStream/skippedFrames``), so the reader never gets a broken GOP, and the others —
/// viewers, sinks, the producer — never wait for it. The memory one stalled reader can hold is
/// thus ``byteLimit`` bytes of frames plus ``frameLimit`` frame values (about 100 bytes each).
public struct LiveSinkLimits: Sendable, Hashable {
    /// The most bytes of frames waiting for the reader.
    public var byteLimit: Int
    /// The most frames waiting for the reader.
    public var frameLimit: Int

    /// At most `byteLimit` bytes and `frameLimit` frames wait for the reader.
    ///
    /// - Parameters:
    ///   - byteLimit: the most bytes of frames waiting.
    ///   - frameLimit: the most frames waiting.
    public init(byteLimit: Int, frameLimit: Int) {
        self.byteLimit = max(1, byteLimit)
        self.frameLimit = max(1, frameLimit)
    }

    /// 8 MiB and 300 frames: 10 s of a 30 fps stream at up to 6 Mbit/s.
    public static let standard = LiveSinkLimits(byteLimit: 8 << 20, frameLimit: 300)
}

/// The frames of a live stream, for one reader at its own pace: bounded by ``LiveSinkLimits``,
/// starting at a keyframe (the relay's kept GOP, or the next keyframe, which the broadcaster
/// asks its encoder for), and cut back to the next keyframe when the reader falls behind —
/// never a broken GOP.
///
/// Get one from ``Broadcaster/frames(limits:)``, or as the argument of a ``LiveSink``'s
/// ``LiveSink/consume(_:)``. The sequence ends when the broadcaster closes its viewers
/// (``Broadcaster/closeAll(flushing:flushTimeout:)``: the waiting frames first) or when the
/// reading task is cancelled; it is read by one task.
public struct LiveFrameStream: AsyncSequence, Sendable {
    /// A frame of the stream.
    public typealias Element = CompressedFrame
    /// Never thrown: the sequence ends instead.
    public typealias Failure = Never

    let subscription: LiveSubscription

    /// Frames dropped because the reader fell behind (cut back to the next keyframe), and
    /// frames before the first keyframe it got, in all.
    public var skippedFrames: Int { subscription.gate.skippedFrames }

    /// The times the reader fell behind and was cut back to the next keyframe.
    public var skips: Int { subscription.gate.closings }

    /// The iterator.
    public func makeAsyncIterator() -> Iterator { Iterator(subscription: subscription) }

    /// Reads the frames one by one.
    public struct Iterator: AsyncIteratorProtocol {
        let subscription: LiveSubscription

        /// The next frame; nil when the stream has ended or the task was cancelled.
        public mutating func next() async -> CompressedFrame? {
            await subscription.next()
        }

        /// The next frame; nil when the stream has ended or the task was cancelled.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> CompressedFrame? {
            await subscription.next()
        }
    }
}

/// The queue between a ``Broadcaster`` and one ``LiveFrameStream`` reader: frames offered by the
/// producer (never waiting), taken by the reader (suspending while none is queued).
final class LiveSubscription: Sendable {
    private struct State {
        var queue = CircularBuffer<CompressedFrame>(initialCapacity: 16)
        var bytes = 0
        var gate = KeyframeGate()
        var waiter: CheckedContinuation<CompressedFrame?, Never>?
        var finished = false
        /// The reader asked for a keyframe since the gate last closed.
        var asked = false
    }

    private let state = Locked(State())
    let limits: LiveSinkLimits
    /// Called (outside the lock) when the gate closes or the reader starts waiting for a keyframe.
    private let wantsKeyframe: @Sendable () -> Void
    private let onEnd: @Sendable () -> Void

    init(limits: LiveSinkLimits, wantsKeyframe: @escaping @Sendable () -> Void, onEnd: @escaping @Sendable () -> Void) {
        self.limits = limits
        self.wantsKeyframe = wantsKeyframe
        self.onEnd = onEnd
    }

    /// The gate's counts.
    var gate: KeyframeGate { state.withLock { $0.gate } }

    /// True while the reader waits for a keyframe it has asked for.
    var waitsForKeyframe: Bool { state.withLock { !$0.gate.isOpen && !$0.finished } }

    /// Queues `frame` for the reader (or hands it to the waiting reader), through the keyframe
    /// gate; past the limits, drops the queue and closes the gate. Never waits.
    func offer(_ frame: CompressedFrame) {
        var ask = false
        let resumed: (CheckedContinuation<CompressedFrame?, Never>, CompressedFrame)? = state.withLock { s in
            guard !s.finished else { return nil }
            if s.gate.isOpen && (s.queue.count >= limits.frameLimit || s.bytes + frame.data.count > limits.byteLimit) {
                s.gate.countSkipped(s.queue.count)
                s.queue.removeAll(keepingCapacity: true)
                s.bytes = 0
                s.gate.close()
                s.asked = false
            }
            guard s.gate.admit(frame) else {
                if !s.asked { s.asked = true; ask = true }
                return nil
            }
            if let waiter = s.waiter {
                s.waiter = nil
                return (waiter, frame)
            }
            s.queue.append(frame)
            s.bytes += frame.data.count
            return nil
        }
        if ask { wantsKeyframe() }
        if let (waiter, frame) = resumed { waiter.resume(returning: frame) }
    }

    /// Ends the stream: the reader gets the queued frames, then nil.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<CompressedFrame?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.queue.isEmpty ? s.waiter : nil
        }
        waiter?.resume(returning: nil)
    }

    /// Ends the stream at once (the reader was cancelled): the queued frames are dropped.
    func cancel() {
        let waiter = state.withLock { s -> CheckedContinuation<CompressedFrame?, Never>? in
            s.finished = true
            s.queue.removeAll()
            s.bytes = 0
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
        onEnd()
    }

    /// The next frame, suspending until one comes; nil at the end or on cancellation (the
    /// broadcaster then forgets this reader).
    func next() async -> CompressedFrame? {
        if Task.isCancelled {
            cancel()
            return nil
        }
        let frame = await nextFrame()
        if frame == nil { onEnd() }
        return frame
    }

    /// The next frame, suspending until one comes; nil at the end or on cancellation.
    private func nextFrame() async -> CompressedFrame? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CompressedFrame?, Never>) in
                let ready: CompressedFrame?? = state.withLock { s in
                    if let frame = s.queue.popFirst() {
                        s.bytes -= frame.data.count
                        return .some(frame)
                    }
                    if s.finished { return .some(nil) }
                    s.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }
}
