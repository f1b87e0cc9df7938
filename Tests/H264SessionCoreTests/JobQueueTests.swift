import H264
import H264SessionCore
import H264TestSupport
import Testing

/// `JobQueue`: order, the count of unfinished jobs, and the one error of a wait from the queue.
@Suite(.ownThread) struct JobQueueTests {
    @Test func jobsRunInOrderAndAreCounted() {
        let seen = Locked<[Int]>([])
        let queue = JobQueue<Int>(label: "test") { job in seen.withLock { $0.append(job) } }
        for i in 0..<1_000 { queue.enqueue(i) }
        queue.waitForJobs(downTo: 0)
        #expect(queue.unfinishedJobs == 0)
        #expect(seen.withLock { $0 } == Array(0..<1_000))
    }

    /// A job that blocks holds the count up: `waitForJobs(downTo:)` returns once the rest ran.
    @Test func waitForJobsDownToACount() {
        let gate = Locked(false)
        let queue = JobQueue<Int>(label: "test") { job in
            if job == 0 { gate.wait { $0 } }
        }
        queue.enqueue(0)
        queue.enqueue(1)
        queue.enqueue(2)
        #expect(queue.unfinishedJobs == 3)
        gate.withLockWakingWaiters { $0 = true }
        queue.waitForJobs(downTo: 0)
        #expect(queue.unfinishedJobs == 0)
    }

    @Test func waitingFromTheQueueIsTheOneError() {
        let codes = Locked<[String]>([])
        let holder = Locked<JobQueue<Int>?>(nil)
        let queue = JobQueue<Int>(label: "test") { _ in
            guard let q = holder.withLock({ $0 }) else { return }
            do throws(MediaError) { try q.checkNotCurrent("waitForQueuedFrames") } catch {
                codes.withLock { $0.append("\(error.code): \(error.message)") }
            }
        }
        holder.withLock { $0 = queue }
        queue.enqueue(1)
        queue.sync {}
        #expect(!queue.isCurrent)
        #expect(throws: Never.self) { try queue.checkNotCurrent("waitForQueuedFrames") }
        #expect(codes.withLock { $0 } == ["invalidState: waitForQueuedFrames cannot be called from the output handler"])
        holder.withLock { $0 = nil }
    }
}
