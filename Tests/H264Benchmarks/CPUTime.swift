import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// CPU time (user + system, every thread) of this process or of another, for the benchmarks
/// that compare whole processes over the same wall-clock window.
enum CPUTime {
    /// This process's CPU seconds so far (`getrusage(RUSAGE_SELF)`, microsecond resolution).
    static func ofThisProcess() -> Double { splitOfThisProcess().total }

    /// The times a thread of this process gave up the CPU to wait (`ru_nvcsw`): roughly, its
    /// threads' wakeups.
    static func voluntaryContextSwitchesOfThisProcess() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_nvcsw
    }

    /// ``ofThisProcess()`` as user and system time.
    static func splitOfThisProcess() -> Split {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Split(user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
    }

    /// CPU seconds in user space and in the kernel (on the process's behalf: its system calls,
    /// and on loopback the receiving side's TCP stack that runs inside them).
    struct Split {
        var user: Double
        var system: Double
        var total: Double { user + system }

        static func - (after: Split, before: Split) -> Split {
            Split(user: after.user - before.user, system: after.system - before.system)
        }

        /// One side's CPU over its `windows` of a report's detail, `seconds` long in all:
        /// "1.23 s CPU (6.2 % of a core; user 0.80 + system 0.43; 0.31 / 0.30 / … s per window)".
        static func describe(_ windows: [Split], over seconds: Double) -> String {
            let total = windows.reduce(0) { $0 + $1.total }
            let user = windows.reduce(0) { $0 + $1.user }, system = windows.reduce(0) { $0 + $1.system }
            return String(format: "%.2f s CPU (%.1f %% of a core; user %.2f + system %.2f; ", total, total / seconds * 100, user, system)
                + windows.map { String(format: "%.2f", $0.total) }.joined(separator: " / ") + " s per window)"
        }
    }

    /// The CPU seconds process `pid` used so far: `utime` + `stime` of `/proc/PID/stat`
    /// (every thread's, in clock ticks: 10 ms resolution); nil once it is gone.
    static func ofProcess(_ pid: Int32) -> Double? { splitOfProcess(pid)?.total }

    /// ``ofProcess(_:)`` as user and system time.
    static func splitOfProcess(_ pid: Int32) -> Split? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = stat.lastIndex(of: ")") else { return nil }
        // After "PID (comm)": state is field 3, utime 14 and stime 15 (proc(5)).
        let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
        return Split(user: user / tick, system: system / tick)
    }

    /// The sum of ``ofProcess(_:)`` over `pids` (a process already gone counts nothing).
    static func ofProcesses(_ pids: [Int32]) -> Double { splitOfProcesses(pids).total }

    /// ``ofProcesses(_:)`` as user and system time.
    static func splitOfProcesses(_ pids: [Int32]) -> Split {
        pids.reduce(Split(user: 0, system: 0)) { sum, pid in
            let split = splitOfProcess(pid) ?? Split(user: 0, system: 0)
            return Split(user: sum.user + split.user, system: sum.system + split.system)
        }
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }
}
