import CX264Baseline
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The same thread placement for both sides of a session-vs-C benchmark: every thread of this
/// process pinned to one CPU set while `body` runs (threads created meanwhile — libdispatch
/// workers, x264's, x265's and libavcodec's — inherit it from their creator), then set back.
enum CPUPinning {
    /// The CPUs a benchmark with `threads` codec threads is pinned to: the last CPU for one
    /// thread (the session's queue worker and the C loop's then run on the same core, not
    /// wherever the scheduler puts each), every CPU otherwise (the codec's own threads spread
    /// over all of them on both sides).
    static func cpus(forThreads threads: Int) -> [Int] {
        let count = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        return threads == 1 ? [count - 1] : Array(0..<count)
    }

    /// Runs `body` with every thread of the process pinned to `cpus`.
    static func withProcess<R>(pinnedTo cpus: [Int], _ body: () throws -> R) throws -> R {
        var original = [Int32](repeating: 0, count: 1024)
        let count = cx264_baseline_get_affinity(0, &original, Int32(original.count))
        guard count > 0 else { throw PinningError("sched_getaffinity: errno \(errno)") }
        original.removeLast(original.count - Int(count))
        try setEveryThread(cpus.map(Int32.init))
        defer { try? setEveryThread(original) } // best effort: the benchmark's figures are taken by then
        return try body()
    }

    /// The figure's label: `CPU 1`, `CPUs 0–1`.
    static func label(_ cpus: [Int]) -> String {
        cpus.count == 1 ? "CPU \(cpus[0])" : "CPUs \(cpus.first ?? 0)–\(cpus.last ?? 0)"
    }

    private static func setEveryThread(_ cpus: [Int32]) throws {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { Int32($0) }
        for tid in tasks where cx264_baseline_set_affinity(tid, cpus, Int32(cpus.count)) != 0 && errno != ESRCH {
            throw PinningError("sched_setaffinity(\(tid)): errno \(errno)")
        }
    }

    struct PinningError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
