import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps every thread of the process at the priority the process was started with.
///
/// A server started as `nice -n -10 h264 serve …` sets the nice value of the process's first thread, and threads
/// inherit it when they are created. On Linux, though, libdispatch sets its worker threads
/// (which run the encoder session's queue and Swift concurrency's executor) to nice values of
/// its own per quality of service, 0 or −4, so the work of a server deployed with a higher
/// priority would run at the ordinary one and fall behind its schedule on a loaded machine.
/// `adopt()` sets every thread of the process, those created since too, to the first thread's
/// nice value. Nothing happens when that value is 0 (the process was not started under `nice`),
/// and a thread the process may not raise keeps its priority. Elsewhere (Darwin: one nice
/// value per process) it does nothing.
///
/// Measured (ServeBenchmarks, 50 viewers, host load 11–13, server under `nice -n -10`): with
/// it, a joining viewer's first IDR came after a median 0.3–0.85 frame intervals (worst 2.05);
/// with only the first thread at −10, after 1.0–3.0 (worst 19), the workers being at 0 and −4.
public struct ProcessPriority: Sendable {
    /// The first thread's nice value, read when this value is made.
    public let nice: Int32

    /// Reads the process's nice value (that of its first thread).
    public init() {
        #if os(Linux)
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        nice = errno == 0 ? value : 0
        #else
        nice = 0
        #endif
    }

    /// Sets every thread whose nice value differs to the process's. Cheap enough to call once
    /// a second: one directory listing and two system calls per thread.
    public func adopt() {
        #if os(Linux)
        guard nice != 0 else { return }
        for (tid, current) in Self.threadNiceValues(of: getpid()) where current != nice {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid, nice)
        }
        #endif
    }

    /// The nice value of each thread of process `pid`, by thread id (Linux: `/proc/PID/task`;
    /// empty elsewhere, and without threads that ended while it read them).
    ///
    /// - Parameter pid: the process.
    /// - Returns: each thread's nice value by thread id.
    public static func threadNiceValues(of pid: Int32) -> [UInt32: Int32] {
        var values: [UInt32: Int32] = [:]
        #if os(Linux)
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for tid in tasks.compactMap({ id_t($0) }) {
            errno = 0
            let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid)
            if errno == 0 { values[tid] = value }
        }
        #endif
        return values
    }
}
