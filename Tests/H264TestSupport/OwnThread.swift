import Foundation
import H264
public import Testing

/// A suite trait (`@Suite(.ownThread)`): each test case of the suite runs on threads of its
/// own rather than on Swift concurrency's cooperative pool.
///
/// On Linux the cooperative pool is as wide as the machine has cores — two here — and Swift
/// Testing calls a synchronous test function on it. Tests that block for long (a peer process
/// run to its end, a session waited for) then hold the whole pool: in CI two of them held it
/// for 90 s, every asynchronous test in flight stalled with them, and an RTSP server in one of
/// those ended an idle connection whose client could not run. (The `.blocking` trait before
/// this one gave the blocking suites two threads to share: their async tests then waited
/// behind them there.) Under this trait a test case's body, its child tasks and the
/// continuations it awaits that are not isolated to an actor run on a ``ThreadExecutor`` of
/// its own (a task executor preference), so blocking there stalls nothing else.
///
/// A test case's time limit (`.timeLimit`) ends it even while it blocks: Swift Testing only
/// cancels the case's task and waits for it, so the case's processes are killed then (see
/// ``TestProcesses``), and its waiting for a place (``TestCaseGate``) comes before the limit.
public struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// Two scopes: around each test function as a whole (`testCase == nil`, not a suite), its
    /// places at the ``TestCaseGate``; around each test case, its thread and its processes.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThread? {
        testCase != nil || !test.isSuite ? self : nil
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else {
            // Swift Testing runs this scope outside the test cases' time limits (those run from
            // each case's start): waiting for places here does not count against them. The cases
            // of a parameterized test that is not serialized run side by side: it takes every
            // place, and its cases share them.
            let sideBySide = test.isParameterized && !test.traits.contains { $0 is ParallelizationTrait }
            let places = sideBySide ? TestCaseGate.shared.width : 1
            await TestCaseGate.shared.enter(places)
            defer { TestCaseGate.shared.leave(places) }
            guard sideBySide else { return try await function() }
            return try await TestCaseGate.$ofTheTest.withValue(TestCaseGate(width: places)) { try await function() }
        }
        // Within the case's time limit, but waiting only for the test's own other cases.
        let cases = TestCaseGate.ofTheTest
        await cases?.enter(1)
        defer { cases?.leave(1) }
        let executor = ThreadExecutor(name: test.name)
        defer { executor.finish() }
        // A time limit exceeded cancels the test case's task: its processes are killed, so
        // that a test blocked waiting for one of them returns (see ``TestProcesses``).
        let processes = TestProcesses()
        try await TestProcesses.$current.withValue(processes) {
            try await withTaskCancellationHandler {
                try await withTaskExecutorPreference(executor) { try await function() }
            } onCancel: {
                processes.cancel()
            }
        }
    }
}

/// At most as many test cases under ``OwnThread`` at once as the machine has cores (two at
/// least): on the cooperative pool no more could run, and the real-time peer tests (a 30 fps
/// stream, a camera's idle timeout) need the cores they had there (with four at once, nine
/// of them failed). Waiting test functions are suspended, holding no thread; a test function
/// holds its place for all its test cases (a parameterized one run side by side, all places).
final class TestCaseGate: Sendable {
    static let shared = TestCaseGate(width: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// The places of the parameterized test running on this task, shared by its cases.
    @TaskLocal static var ofTheTest: TestCaseGate?

    /// How many places there are.
    let width: Int
    private let state: Locked<(free: Int, waiting: [(places: Int, continuation: CheckedContinuation<Void, Never>)])>

    init(width: Int) {
        self.width = width
        state = Locked((width, []))
    }

    /// Returns once `places` places are free (taking them); first come, first served.
    func enter(_ places: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.waiting.isEmpty, state.free >= places else {
                    state.waiting.append((places, continuation))
                    return false
                }
                state.free -= places
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Frees `places` places, and gives them to those waiting first, as far as they go.
    func leave(_ places: Int) {
        let next = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.free += places
            var next: [CheckedContinuation<Void, Never>] = []
            while let first = state.waiting.first, first.places <= state.free {
                state.free -= first.places
                next.append(state.waiting.removeFirst().continuation)
            }
            return next
        }
        next.forEach { $0.resume() }
    }
}

extension Trait where Self == OwnThread {
    /// Each test case on a thread of its own (see ``OwnThread``).
    public static var ownThread: Self { OwnThread() }
}

/// A task executor with threads of its own: a job queued while none of them waits for work
/// starts another, so a job that blocks (a test waiting for a subprocess, a session, a
/// semaphore) never holds up the others — the test's child tasks, the continuations it awaits.
/// ``finish()`` lets the threads end once the queue is empty; a job that comes later starts a
/// thread again.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs`, `waiting` and `finished` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var waiting = 0
    private var finished = false
    private let name: String

    /// An executor whose threads are named `name` (cut to what Linux keeps); no thread yet.
    public init(name: String) {
        self.name = String(name.prefix(15))
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // Every queued job needs a thread waiting for it; else one more starts.
        let starts = waiting < jobs.count
        if !starts { condition.signal() }
        condition.unlock()
        if starts {
            let thread = Thread { [self] in run() }
            thread.name = name
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// No more jobs are expected: each thread ends once the queue is empty.
    public func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// A thread's loop: queued jobs, one at a time, until the executor is finished and the queue empty.
    private func run() {
        let executor = asUnownedTaskExecutor()
        condition.lock()
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: executor)
                condition.lock()
            } else if finished {
                condition.unlock()
                return
            } else {
                waiting += 1
                condition.wait()
                waiting -= 1
            }
        }
    }
}
