import Foundation
public import Testing

/// Two threads of their own for the tests that block: the CLI and peer tests wait for
/// subprocesses and sockets synchronously. Run on Swift's cooperative pool (as wide as the
/// machine has cores: two in CI), two such tests take every thread it has, and the async tests'
/// continuations wait behind every test not yet started — minutes, long enough for a server's
/// 60-second idle timeout to close a connection a starved test has just opened. On these
/// threads the blocking tests still run two at a time, in the order they come, and the pool
/// stays free for the async tests.
public final class BlockingTestExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` is only touched with `condition` locked.
    /// The executor the ``Trait/blocking`` trait runs tests on.
    public static let shared = BlockingTestExecutor(threads: 2)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [self] in run() }
            thread.name = "blocking tests \(index + 1)"
            thread.start()
        }
    }

    /// Queues `job` for the next free thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// A thread's loop: the jobs in the order they came.
    private func run() {
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next > 1_024 {
                jobs.removeFirst(next)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs a suite's tests on ``BlockingTestExecutor/shared`` (see there why).
public struct BlockingTestsTrait: SuiteTrait, TestTrait, TestScoping {
    /// The suite's tests inherit the executor from the suite's scope.
    public var isRecursive: Bool { false }

    /// Runs the suite (or test) preferring the blocking executor.
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(BlockingTestExecutor.shared) { try await function() }
    }
}

extension Trait where Self == BlockingTestsTrait {
    /// The tests block their thread (subprocesses, sockets): run them on threads of their own.
    public static var blocking: Self { BlockingTestsTrait() }
}
