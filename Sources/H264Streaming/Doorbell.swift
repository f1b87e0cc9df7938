import H264

/// Wakes a sleeping pacer early: ``sleep(until:)`` returns at its deadline or as soon as
/// ``ring()`` is called, whichever comes first. A ring while nobody sleeps is kept for the next
/// sleep (which then returns at once), so a ring is never lost between a check and a sleep.
///
/// A live loop rings it when a viewer asks for an IDR (``Broadcaster``'s keyframe request: the
/// due frame may then go early) and when it should stop; otherwise it sleeps to its frame's
/// deadline (``FrameSchedule``).
public final class Doorbell: Sendable {
    private enum State {
        case idle
        case rung
        case waiting(CheckedContinuation<Void, Never>)
    }

    private let state = Locked(State.idle)

    /// A doorbell nobody has rung.
    public init() {}

    /// Wakes the sleeper, or the next one to sleep.
    public func ring() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            if case .waiting(let continuation) = state {
                state = .idle
                return continuation
            }
            state = .rung
            return nil
        }
        waiter?.resume()
    }

    /// Returns at `deadline` or when rung, whichever is first (at once when rung since the last
    /// sleep).
    public func sleep(until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(until: deadline, tolerance: .microseconds(500), clock: .continuous) }
            group.addTask { await self.waitForRing() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns when rung, or when the task is cancelled (the deadline came first).
    private func waitForRing() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if case .rung = state {
                        state = .idle
                        return true
                    }
                    // Cancelled before the continuation was stored: the handler found nobody.
                    if Task.isCancelled { return true }
                    state = .waiting(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
                guard case .waiting(let continuation) = state else { return nil }
                state = .idle
                return continuation
            }
            waiter?.resume()
        }
    }
}
