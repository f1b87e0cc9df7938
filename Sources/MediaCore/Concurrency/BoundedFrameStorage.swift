/// The shared state of a ``BoundedFrameStream``: the waiting frames, the consumers waiting for
/// one, and the policy's bookkeeping, behind one lock. A producer that waits for room
/// (``OutputBufferingPolicy/waitingForConsumer(_:)``) sleeps on the lock's condition; the
/// consumer wakes it when it takes a frame.
final class BoundedFrameStorage<Frame: Sendable>: Sendable {
    private struct State: Sendable {
        var ring: FrameRing<Frame>
        /// Consumers suspended in ``next()`` (then the ring is empty).
        var waiters: [UnsafeContinuation<Frame?, Never>] = []
        /// A frame was dropped that later frames may refer to: drop until a keyframe.
        var needsKeyframe = false
        var dropped = 0
        /// The producer ended the stream: read what waits, then nil.
        var finished = false
        /// The consumer's task was cancelled: nothing more is read or kept.
        var cancelled = false
    }

    let policy: OutputBufferingPolicy
    private let isKeyframe: (@Sendable (Frame) -> Bool)?
    private let state: Locked<State>

    init(policy: OutputBufferingPolicy, isKeyframe: (@Sendable (Frame) -> Bool)?) {
        self.policy = policy
        self.isKeyframe = isKeyframe
        state = Locked(State(ring: FrameRing(capacity: policy.limit)))
    }

    var droppedFrameCount: Int { state.withLock { $0.dropped } }

    /// How many frames wait for the consumer.
    var waitingCount: Int { state.withLock { $0.ring.count } }

    /// True when a decoder can start at `frame` (every frame of a stream without a keyframe test).
    private func startsGroup(_ frame: Frame) -> Bool { isKeyframe?(frame) ?? true }

    /// Offers `frame` under the policy; returns how many frames this call dropped.
    func yield(_ frame: Frame) -> Int {
        if case .waitingForConsumer = policy {
            state.wait(until: { !$0.ring.isFull || $0.finished || $0.cancelled })
        }
        let (waiter, dropped) = state.withLock { s -> (UnsafeContinuation<Frame?, Never>?, Int) in
            if s.finished || s.cancelled { return (nil, 0) }
            if s.needsKeyframe {
                guard startsGroup(frame) else {
                    s.dropped += 1
                    return (nil, 1)
                }
                s.needsKeyframe = false
            }
            if !s.waiters.isEmpty { return (s.waiters.removeFirst(), 0) }
            guard s.ring.isFull else {
                s.ring.append(frame)
                return (nil, 0)
            }
            var dropped = 0
            switch policy {
            case .keepingOldest, .waitingForConsumer:
                // (waitingForConsumer is full here only when another producer filled it meanwhile.)
                dropped = 1
                s.needsKeyframe = isKeyframe != nil
            case .keepingNewest:
                // The oldest group: the head frame and every frame after it up to the next keyframe.
                _ = s.ring.popFirst()
                dropped = 1
                while let next = s.ring.first, !startsGroup(next) {
                    _ = s.ring.popFirst()
                    dropped += 1
                }
                if s.ring.count == 0 && !startsGroup(frame) {
                    dropped += 1
                    s.needsKeyframe = true
                } else {
                    s.ring.append(frame)
                }
            }
            s.dropped += dropped
            return (nil, dropped)
        }
        waiter?.resume(returning: frame)
        return dropped
    }

    /// Ends the stream for the producer.
    func finish() {
        let waiters = state.withLockWakingWaiters { s -> [UnsafeContinuation<Frame?, Never>] in
            s.finished = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// Ends the stream for the consumer (its task was cancelled).
    private func cancel() {
        let waiters = state.withLockWakingWaiters { s -> [UnsafeContinuation<Frame?, Never>] in
            s.cancelled = true
            _ = s.ring.removeAll()
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The next frame: a waiting one, or the next the producer yields; nil once ended.
    func next() async -> Frame? {
        if Task.isCancelled {
            cancel()
            return nil
        }
        if let ready = take() { return ready }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Frame?, Never>) in
                let ready = state.withLockWakingWaiters { s -> Frame?? in
                    if let frame = s.ring.popFirst() { return .some(frame) }
                    if s.finished || s.cancelled { return .some(nil) }
                    s.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// A waiting frame taken without suspending, waking a producer waiting for room; nil when
    /// none waits (and the stream has not ended).
    private func take() -> Frame?? {
        let wakes: Bool
        if case .waitingForConsumer = policy { wakes = true } else { wakes = false }
        let body = { (s: inout State) -> Frame?? in
            if s.cancelled { return .some(nil) }
            if let frame = s.ring.popFirst() { return .some(frame) }
            if s.finished { return .some(nil) }
            return nil
        }
        return wakes ? state.withLockWakingWaiters(body) : state.withLock(body)
    }
}
