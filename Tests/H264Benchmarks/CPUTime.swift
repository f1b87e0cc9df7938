import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// CPU time (user + system, every thread) of this process or of another, for the benchmarks
/// that compare whole processes over the same wall-clock window.
enum CPUTime {
    /// This process's CPU seconds so far (`getrusage(RUSAGE_SELF)`, microsecond resolution).
    static func ofThisProcess() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The CPU seconds process `pid` used so far: `utime` + `stime` of `/proc/PID/stat`
    /// (every thread's, in clock ticks: 10 ms resolution); nil once it is gone.
    static func ofProcess(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = stat.lastIndex(of: ")") else { return nil }
        // After "PID (comm)": state is field 3, utime 14 and stime 15 (proc(5)).
        let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The sum of ``ofProcess(_:)`` over `pids` (a process already gone counts nothing).
    static func ofProcesses(_ pids: [Int32]) -> Double {
        pids.reduce(0) { $0 + (ofProcess($1) ?? 0) }
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }
}
