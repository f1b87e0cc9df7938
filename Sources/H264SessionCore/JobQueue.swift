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
/// reused FIFO (``PendingQueue``) and one stored block (not a new closure per job) is submitted
/// to the queue; each run of it takes the oldest job. Jobs waiting and the one being worked on
/// are counted, for ``waitForJobs(downTo:)``.
package final class JobQueue<Job: Sendable>: Sendable {
    /// The serial dispatch queue (tests wait on it with ``sync(_:)``).
    private let queue: DispatchQueue
    private let pending: Locked<PendingQueue<Job>>
    private let runNext: @convention(block) @Sendable () -> Void
    /// Identifies this queue for ``isCurrent``.
    private let identity: Identity

    /// A queue that calls `work` with every enqueued job, in order. `work` is not given a job
    /// twice; the job is released after `work` returns and before its count falls (a producer
    /// woken by ``waitForJobs(downTo:)`` may then reuse what the job referred to).
    package init(label: String, work: @escaping @Sendable (Job) -> Void) {
        queue = DispatchQueue(label: label)
        let pending = Locked(PendingQueue<Job>())
        self.pending = pending
        runNext = {
            var next = pending.withLock { $0.popFirst() }
            if let job = next { work(job) }
            next = nil
            pending.withLockWakingWaiters { $0.finishOne() }
        }
        identity = Identity()
        queue.setSpecific(key: JobQueueKey.key, value: ObjectIdentifier(identity))
    }

    /// Queues `job` behind every job and control job queued before.
    package func enqueue(_ job: Job) {
        pending.withLock { $0.append(job) }
        queue.async(execute: runNext)
    }

    /// Queues a control job.
    package func async(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
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
        pending.wait { $0.unfinished <= limit }
    }

    /// How many enqueued jobs are unfinished.
    package var unfinishedJobs: Int { pending.withLock { $0.unfinished } }

    private final class Identity: Sendable {}
}

/// The queue-specific key of every ``JobQueue`` (a generic type has no static stored property).
private enum JobQueueKey {
    static let key = DispatchSpecificKey<ObjectIdentifier>()
}
