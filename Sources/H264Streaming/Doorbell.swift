import H264
public import NIOCore
import NIOPosix

/// The pacing timer of a live loop, on an event loop: ``sleep(until:)`` returns at its deadline
/// — an event loop's scheduled task, no task sleeping and no child tasks — or as soon as
/// ``ring()`` is called, whichever comes first. A ring while nobody sleeps is kept for the next
/// sleep (which then returns at once), so a ring is never lost between a check and a sleep.
///
/// The one pacer of the package's live sources: ``FramePacer`` sleeps on it to each frame's
/// deadline (``FrameSchedule``) and a ``Broadcaster``'s keyframe request or a stop rings it;
/// ``AnnexBFilePlayer`` sleeps on one to hand out each frame of a file when it is due.
public final class Doorbell: Sendable {
    private enum State {
        case idle
        case rung
        /// A sleeper, its sleep's number (a timer of an earlier sleep finds another number and
        /// does nothing), and its timer once scheduled.
        case waiting(CheckedContinuation<Void, Never>, sleep: UInt64, timer: Scheduled<Void>?)
    }

    private let state = Locked((state: State.idle, sleeps: UInt64(0)))
    private let eventLoop: any EventLoop

    /// A doorbell nobody has rung, whose timers run on `eventLoop` (nil: one of NIO's shared
    /// event loops, `MultiThreadedEventLoopGroup.singleton`).
    ///
    /// - Parameter eventLoop: where the deadlines are scheduled (a server's own loop, say).
    public init(eventLoop: (any EventLoop)? = nil) {
        self.eventLoop = eventLoop ?? MultiThreadedEventLoopGroup.singleton.next()
    }

    /// Wakes the sleeper, or the next one to sleep.
    public func ring() {
        let waiter: (CheckedContinuation<Void, Never>, Scheduled<Void>?)? = state.withLock { s in
            if case .waiting(let continuation, _, let timer) = s.state {
                s.state = .idle
                return (continuation, timer)
            }
            s.state = .rung
            return nil
        }
        waiter?.1?.cancel()
        waiter?.0.resume()
    }

    /// Returns at `deadline` or when rung, whichever is first (at once when rung since the last
    /// sleep, or when the deadline has passed), or when the task is cancelled.
    ///
    /// - Parameter deadline: when to return at the latest.
    public func sleep(until deadline: ContinuousClock.Instant) async {
        let delay = deadline - .now
        guard delay > .zero else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let sleep: UInt64? = state.withLock { s in
                    if case .rung = s.state {
                        s.state = .idle
                        return nil
                    }
                    // Cancelled before the continuation was stored: the handler found nobody.
                    if Task.isCancelled { return nil }
                    s.sleeps &+= 1
                    s.state = .waiting(continuation, sleep: s.sleeps, timer: nil)
                    return s.sleeps
                }
                guard let sleep else {
                    continuation.resume()
                    return
                }
                let timer = eventLoop.scheduleTask(in: TimeAmount(delay)) { self.wake(sleep: sleep) }
                state.withLock { s in
                    if case .waiting(let continuation, sleep, nil) = s.state { s.state = .waiting(continuation, sleep: sleep, timer: timer) }
                }
            }
        } onCancel: {
            wake(sleep: nil)
        }
    }

    /// Resumes the sleeper of sleep number `sleep` (nil: whoever sleeps), without keeping a ring.
    private func wake(sleep: UInt64?) {
        let waiter: (CheckedContinuation<Void, Never>, Scheduled<Void>?)? = state.withLock { s in
            guard case .waiting(let continuation, let number, let timer) = s.state, sleep == nil || sleep == number else { return nil }
            s.state = .idle
            return (continuation, timer)
        }
        if sleep == nil { waiter?.1?.cancel() }
        waiter?.0.resume()
    }
}
