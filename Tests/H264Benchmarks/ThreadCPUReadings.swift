import Foundation
import H264
import H264TestSupport

/// The CPU time of the thread that delivers each output (`CLOCK_THREAD_CPUTIME_ID`, read in the
/// output handler, on the session's encoding thread), kept per run.
final class ThreadCPUReadings: Sendable {
    private struct Reading { var thread: pthread_t; var seconds: Double }
    private struct State { var current: [Reading] = []; var finished: [[Reading]] = [] }
    private let state: Locked<State>

    init(capacity: Int) {
        var initial = State()
        initial.current.reserveCapacity(capacity)
        state = Locked(initial)
    }

    /// Reads the calling thread's CPU time.
    func record() {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        let reading = Reading(thread: pthread_self(), seconds: Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9)
        state.withLock { $0.current.append(reading) }
    }

    /// Ends a run (its readings are kept for ``perRunSeconds(frames:)``).
    func removeAll() {
        state.withLock { s in
            if !s.current.isEmpty { s.finished.append(s.current) }
            s.current.removeAll(keepingCapacity: true)
        }
    }

    /// Each finished run's CPU seconds for frames 2…`frames`: the sum of the differences
    /// between consecutive readings on the same thread, scaled up by the frames whose two
    /// readings fell on different threads (libdispatch may move a queue between workers).
    func perRunSeconds(frames: Int) -> [Double] {
        state.withLock { s in
            let runs = s.finished + (s.current.isEmpty ? [] : [s.current])
            return runs.compactMap { run -> Double? in
                var sum = 0.0, counted = 0
                for (previous, next) in zip(run, run.dropFirst()) where pthread_equal(previous.thread, next.thread) != 0 {
                    sum += next.seconds - previous.seconds
                    counted += 1
                }
                guard counted > 0 else { return nil }
                return sum / Double(counted) * Double(frames - 1)
            }
        }
    }
}

extension Array where Element == [UInt8] {
    /// Calls `body` with a pointer to each element's base address (valid only inside).
    func withPlaneBases<R>(_ body: (UnsafeBufferPointer<UnsafePointer<UInt8>?>) -> R) -> R {
        func recurse(_ index: Int, _ bases: inout [UnsafePointer<UInt8>?]) -> R {
            if index == count { return bases.withUnsafeBufferPointer(body) }
            return self[index].withUnsafeBufferPointer { buffer in
                bases.append(buffer.baseAddress)
                return recurse(index + 1, &bases)
            }
        }
        var bases: [UnsafePointer<UInt8>?] = []
        return recurse(0, &bases)
    }
}
