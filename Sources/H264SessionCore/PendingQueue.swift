/// The job queue of a session (the encoder's frames, the decoder's access units): a FIFO whose
/// storage is reused (no allocation per job once it has grown), that empties a job's slot when
/// it is taken (so it holds nothing it has handed out), and counts the jobs not yet finished —
/// those waiting and the one being worked on — for `waitForQueuedFrames(downTo:)` and
/// `waitForQueuedAccessUnits(downTo:)`. Kept behind the session's `Locked`.
package struct PendingQueue<Job: Sendable>: Sendable {
    private var jobs: [Job?] = []
    private var head = 0
    /// Jobs appended and not yet finished: those waiting and the one being worked on.
    package private(set) var unfinished = 0

    /// An empty queue.
    package init() {}

    /// Appends a job (unfinished until ``finishOne()`` when `counted`).
    package mutating func append(_ job: Job, counted: Bool = true) {
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        jobs.append(job)
        if counted { unfinished += 1 }
    }

    /// A taken job is done (worked on, or dropped after `invalidate`).
    package mutating func finishOne() { unfinished -= 1 }

    /// Takes the oldest waiting job, or nil.
    package mutating func popFirst() -> Job? {
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        jobs[head] = nil
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        return job
    }
}
