public import Foundation
import H264

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The processes a test case started (``Subprocess``, ``LoggingProcess``), so that its time
/// limit ends it.
///
/// Swift Testing's `.timeLimit` records an issue and cancels the test case's task, but waits
/// for the test function to return: a synchronous test blocked in `waitUntilExit()` or in a
/// read of a peer's pipe would go on holding the run (measured with Swift 6.3.1: a 1-minute
/// limit on a test waiting for `sleep 100` recorded the issue at 60 s, and the test ended at
/// 100 s). Under ``OwnThread`` a cancelled test case kills the process group of every process
/// it started (each is the leader of its own group, `timeout`'s child included), and each one
/// it starts after that at once: its waits return, and the test ends with the time-limit issue.
public final class TestProcesses: @unchecked Sendable {
    // @unchecked Sendable: the processes are only touched with `state` locked.
    /// The processes of the test case running on this task, if it runs under ``OwnThread``.
    @TaskLocal public static var current: TestProcesses?

    private let state = Locked((cancelled: false, processes: [Process]()))

    public init() {}

    /// Adds a started process of the current test case (none: nothing to do).
    static func register(_ process: Process) {
        guard let processes = current else { return }
        let killNow = processes.state.withLock { state in
            state.processes.append(process)
            return state.cancelled
        }
        if killNow { Self.killGroup(of: process) }
    }

    /// Kills every process group registered, and those registered later.
    public func cancel() {
        state.withLock { state in
            state.cancelled = true
            state.processes.forEach(Self.killGroup)
        }
    }

    /// SIGKILL to the process group that `process` leads (Foundation starts each child as the
    /// leader of a group of its own), or to the process alone if it leads none; nothing once
    /// it has ended (its pid may be another's by then).
    private static func killGroup(of process: Process) {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        if getpgid(pid) == pid { kill(-pid, SIGKILL) } else { kill(pid, SIGKILL) }
    }
}
