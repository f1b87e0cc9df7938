import Dispatch
package import MediaCore

/// The serial queue a session's codec runs on, and its accounting of queued work: the encoder's
/// frames and the decoder's access units go through ``enqueue(_:)``; control jobs (a flush, a
/// close, a live reconfiguration) through ``async(_:)`` and ``sync(_:)``.
///
/// Why a queue: `encode` and `decode` return without waiting for the codec, so a capture or
/// receiving thread never waits for libx264 or libavcodec; the queue is the only place the
/// codec works on jobs, so outputs come from one serial context, in order.
///
/// ``enqueue(_:)`` allocates nothing once the pending storage has grown: the job goes into a
/// reused FIFO (``PendingQueue``), and the queue is woken only when it is idle — one stored
/// block (not a new closure per job) drains the FIFO until it is empty. A `DispatchQueue.async`
/// per job cost one allocation per frame (libdispatch takes a continuation from the heap when
/// the producer's thread has none cached, which is always when another thread runs them):
/// `allocations_per_frame` 2.15 → about 1 in release. Control jobs (``async(_:)``) go through
/// the same FIFO, so every job runs in the order it was queued. Jobs waiting and the one being
/// worked on are counted, for ``waitForJobs(downTo:)``; control jobs are not.
package final class JobQueue<Job: Sendable>: Sendable {
    /// A queued job, or a control job (a flush, a close, a live reconfiguration).
    private enum Entry: Sendable {
        case job(Job)
        case control(@Sendable () -> Void)
    }

    /// The FIFO, and whether a drain is scheduled or running (then a new entry needs no wake-up).
    private struct Pending: Sendable {
        var entries = PendingQueue<Entry>()
        var draining = false
        /// Tasks suspended in ``jobsFinished(downTo:)``: each resumes once at most `limit` jobs
        /// are unfinished.
        var waiters: [(limit: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// The serial dispatch queue (tests wait on it with ``sync(_:)``).
    private let queue: DispatchQueue
    private let pending: Locked<Pending>
    private let drain: @convention(block) @Sendable () -> Void
    /// Identifies this queue for ``isCurrent``.
    private let identity: Identity

    /// A queue that calls `work` with every enqueued job, in order. `work` is not given a job
    /// twice; the job is released after `work` returns and before its count falls (a producer
    /// woken by ``waitForJobs(downTo:)`` may then reuse what the job referred to).
    package init(label: String, work: @escaping @Sendable (Job) -> Void) {
        queue = DispatchQueue(label: label)
        let pending = Locked(Pending())
        self.pending = pending
        drain = {
            while true {
                var next = pending.withLock { state -> Entry? in
                    if let entry = state.entries.popFirst() { return entry }
                    state.draining = false
                    return nil
                }
                guard let entry = next else { return }
                let counted: Bool
                switch entry {
                case .job(let job):
                    work(job)
                    counted = true
                case .control(let body):
                    body()
                    counted = false
                }
                next = nil
                if counted {
                    let ready = pending.withLockWakingWaiters { state -> [CheckedContinuation<Void, Never>] in
                        state.entries.finishOne()
                        return Self.takeWaiters(&state)
                    }
                    for continuation in ready { continuation.resume() }
                }
            }
        }
        identity = Identity()
        queue.setSpecific(key: JobQueueKey.key, value: ObjectIdentifier(identity))
    }

    /// Queues `job` behind every job and control job queued before.
    package func enqueue(_ job: Job) {
        append(.job(job), counted: true)
    }

    /// Queues a control job behind every job and control job queued before.
    package func async(_ body: @escaping @Sendable () -> Void) {
        append(.control(body), counted: false)
    }

    /// Appends `entry`, and wakes the queue when no drain is scheduled.
    private func append(_ entry: Entry, counted: Bool) {
        let wake = pending.withLock { state -> Bool in
            state.entries.append(entry, counted: counted)
            if state.draining { return false }
            state.draining = true
            return true
        }
        if wake { queue.async(execute: drain) }
    }

    /// Runs `body` on the queue after everything queued before, and waits for it.
    package func sync<R>(_ body: () -> R) -> R {
        queue.sync(execute: body)
    }

    /// True on this queue (in the session's output handler), where waiting for the queue would
    /// wait for itself.
    package var isCurrent: Bool {
        DispatchQueue.getSpecific(key: JobQueueKey.key) == ObjectIdentifier(identity)
    }

    /// Throws the session's one error for a wait from the output handler.
    ///
    /// - Throws: `MediaError.Code.invalidState` on this queue.
    package func checkNotCurrent(_ call: String) throws(MediaError) {
        if isCurrent { throw SessionLifecycle.fromOutputHandler(call) }
    }

    /// Blocks until at most `count` enqueued jobs are unfinished (waiting, or being worked on);
    /// a negative count is taken as 0.
    package func waitForJobs(downTo count: Int) {
        let limit = max(count, 0)
        pending.wait(until: { $0.entries.unfinished <= limit })
    }

    /// Suspends until at most `count` enqueued jobs are unfinished (waiting, or being worked
    /// on); a negative count is taken as 0. The task is resumed from the queue when the job that
    /// brings the count down finishes: no thread blocks.
    package func jobsFinished(downTo count: Int) async {
        let limit = max(count, 0)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = pending.withLock { state -> Bool in
                if state.entries.unfinished <= limit { return true }
                state.waiters.append((limit, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Suspends until everything queued before has run: a control job queued now resumes the
    /// task (``sync(_:)`` without blocking a thread).
    package func queuedWorkDone() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            async { continuation.resume() }
        }
    }

    /// Removes and returns the waiters whose limit the count now meets (nothing allocated when
    /// none waits).
    private static func takeWaiters(_ state: inout Pending) -> [CheckedContinuation<Void, Never>] {
        guard !state.waiters.isEmpty else { return [] }
        let unfinished = state.entries.unfinished
        var ready: [CheckedContinuation<Void, Never>] = []
        state.waiters.removeAll { waiter in
            guard unfinished <= waiter.limit else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }

    /// How many enqueued jobs are unfinished.
    package var unfinishedJobs: Int { pending.withLock { $0.entries.unfinished } }

    private final class Identity: Sendable {}
}

/// The queue-specific key of every ``JobQueue`` (a generic type has no static stored property).
private enum JobQueueKey {
    static let key = DispatchSpecificKey<ObjectIdentifier>()
}
