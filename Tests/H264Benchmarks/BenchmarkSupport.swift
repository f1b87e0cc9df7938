import CX264Baseline
import Foundation
import H264
import H264TestSupport
import Testing

/// All benchmarks, one after another (never beside each other or beside other tests' work).
@Suite("H264Benchmarks", .serialized, .ownThread)
struct AllBenchmarks {}

/// Wall-clock timing, interleaved measure/baseline runs and the benchmark report.
///
/// Every figure is a ratio of two medians (measure ÷ baseline, or baseline ÷ measure for
/// throughput), measured in the same process on the same data with the runs of the two
/// interleaved, so that drift in the machine's load touches both alike.
enum Bench {
    /// Runs per measure and per baseline: 9 (medians of at least 5 are asked for), or
    /// `H264_BENCHMARK_RUNS`. A debug build (plain `swift test`) makes one run, as a check of
    /// the outputs only.
    static let runs: Int = {
        if let value = ProcessInfo.processInfo.environment["H264_BENCHMARK_RUNS"], let runs = Int(value) {
            return max(runs, 1)
        }
        return isDebugBuild ? 1 : 9
    }()

    /// Untimed runs of each before the timed ones.
    static let warmUpRuns = isDebugBuild ? 0 : 1

    /// Keeps freed memory in the process (glibc `mallopt`: no `mmap` for large blocks, no heap
    /// trimming): a large buffer freed by one run is reused by the next instead of being
    /// unmapped and faulted in afresh, page by page, which on this virtual machine costs more
    /// than the work measured (about 5 µs per 4 KiB page: a fresh 31 MB array costs ~40 ms).
    /// The `memcpy` baselines copy into memory that is already faulted in, so the measures
    /// must too.
    /// Every measure that allocates its output sees the same steady state, as a program that
    /// converts buffer after buffer does. Call before measuring; idempotent.
    static let keepFreedMemory: Void = {
        cx264_baseline_keep_freed_memory()
    }()

    /// True in a debug build, whose figures mean nothing (the benchmarks then only check output).
    static var isDebugBuild: Bool {
        #if DEBUG
        return true
        #else
        return false
        #endif
    }

    /// Monotonic nanoseconds.
    @inline(__always)
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// Minor page faults of the process so far.
    static func pageFaults() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_minflt
    }

    /// Seconds taken by `body`.
    @inline(__always)
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return Double(now() &- start) / 1e9
    }

    /// The median of some values.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The median of the ratios of paired runs, `measures[i] / baselines[i]`, each pair run back to
    /// back: a drift in the machine's speed that outlasts a pair (another VM's load, the clock's
    /// frequency) scales both of a pair alike and cancels, where a ratio of two medians keeps it.
    static func pairedRatio(_ measures: [Double], _ baselines: [Double]) -> Double {
        median(zip(measures, baselines).map { $0 / $1 })
    }

    /// The frames (or access units) one stream of a `framesPerSecond` source may deliver in a
    /// window of `seconds`: from 90 % of the source's (a loaded machine's late start) to 105 %
    /// (a sender that fell behind catches up a few frames; one that sends more than the source
    /// has is caught), each end widened by `slack` for counts sampled at intervals (FFmpeg's
    /// `-progress`, every 0.5 s: 15 frames).
    static func framesPerWindow(seconds: Double, framesPerSecond: Double = 30, slack: Int = 0) -> ClosedRange<Int> {
        let frames = framesPerSecond * seconds
        return (Int(frames * 0.9) - slack)...(Int((frames * 1.05).rounded(.up)) + slack)
    }

    /// The result file of a benchmark that runs in a child process (see ``inChild(_:environment:)``),
    /// when this process is that child.
    static var childResultPath: String? { ProcessInfo.processInfo.environment["H264_BENCHMARK_CHILD_RESULT"] }

    /// Runs the test `name` again in a child process (this test binary, filtered to it) with
    /// `environment` added, and returns the numbers it wrote to ``childResultPath``: for
    /// settings that only take effect from process start (a preloaded `malloc`, glibc's arena
    /// count).
    static func inChild(_ name: String, environment: [String: String]) throws -> [Double] {
        let resultPath = FileManager.default.temporaryDirectory.appendingPathComponent("h264-benchmark-\(getpid())-\(name).txt").path
        defer { try? FileManager.default.removeItem(atPath: resultPath) }
        var childEnvironment = environment
        childEnvironment["H264_BENCHMARK_CHILD_RESULT"] = resultPath
        childEnvironment["H264_BENCHMARK_REPORT"] = ""
        let child = try Subprocess.launch(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path,
                                          ["--testing-library", "swift-testing", "--filter", name],
                                          standardError: FileHandle.standardError, environment: childEnvironment)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0, "the child process running \(name)")
        return try String(contentsOfFile: resultPath, encoding: .utf8).split(separator: " ").compactMap { Double($0) }
    }

    /// This process's CPU seconds so far, every thread (`CLOCK_PROCESS_CPUTIME_ID`, nanoseconds).
    @inline(__always)
    static func processCPU() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// What ``interleave(runs:warmUp:setUpMeasure:measure:setUpBaseline:baseline:)`` measured:
    /// medians of the timed runs' wall seconds and of this process's CPU seconds (every
    /// thread) over the same runs, and every run's figures in order.
    struct Interleaved {
        var measure: Double
        var baseline: Double
        var measureCPU: Double
        var baselineCPU: Double
        var measures: [Double]
        var baselines: [Double]
        var measureCPUs: [Double]
        var baselineCPUs: [Double]
    }

    /// Medians of interleaved runs: `setup` (untimed) before each timed `measure` and each
    /// timed `baseline`, alternating which goes first (ABBA…). An error thrown by any of them
    /// ends the benchmark (it is not a run).
    static func interleave(runs: Int = Bench.runs, warmUp: Int = Bench.warmUpRuns,
                           setUpMeasure: () throws -> Void = {}, measure: () throws -> Void,
                           setUpBaseline: () throws -> Void = {}, baseline: () throws -> Void) throws -> Interleaved {
        Bench.keepFreedMemory
        for _ in 0..<warmUp {
            try setUpMeasure(); try measure()
            try setUpBaseline(); try baseline()
        }
        var measures: [Double] = [], measureCPUs: [Double] = []
        var baselines: [Double] = [], baselineCPUs: [Double] = []
        let faults = pageFaults()
        defer {
            if ProcessInfo.processInfo.environment["H264_BENCHMARK_VERBOSE"] != nil {
                print("  page faults during the timed runs: \(pageFaults() - faults); measure runs \(measures.map { String(format: "%.3f", $0 * 1e3) }) ms, baseline \(baselines.map { String(format: "%.3f", $0 * 1e3) }) ms; process CPU: measure \(measureCPUs.map { String(format: "%.3f", $0 * 1e3) }) ms, baseline \(baselineCPUs.map { String(format: "%.3f", $0 * 1e3) }) ms")
            }
        }
        for run in 0..<runs {
            for step in 0..<2 {
                let cpu: Double
                if (run + step) % 2 == 0 {
                    try setUpMeasure()
                    cpu = processCPU()
                    measures.append(try time(measure))
                    measureCPUs.append(processCPU() - cpu)
                } else {
                    try setUpBaseline()
                    cpu = processCPU()
                    baselines.append(try time(baseline))
                    baselineCPUs.append(processCPU() - cpu)
                }
            }
        }
        return Interleaved(measure: median(measures), baseline: median(baselines),
                           measureCPU: median(measureCPUs), baselineCPU: median(baselineCPUs),
                           measures: measures, baselines: baselines, measureCPUs: measureCPUs, baselineCPUs: baselineCPUs)
    }
}

/// The collected figures: printed as a table and, when `H264_BENCHMARK_REPORT` names a file,
/// written there as one JSON object `{ "measure_name": number, … }` (rewritten after each
/// measure, so the file holds every figure once the run ends).
final class BenchmarkReport: Sendable {
    static let shared = BenchmarkReport()

    struct Row: Sendable {
        var name: String
        var value: Double
        var goal: String
        var detail: String
    }

    private let rows = Locked<[Row]>([])

    /// Records a figure, prints its row, and rewrites the JSON report.
    func record(_ name: String, _ value: Double, goal: String, detail: String) {
        let row = Row(name: name, value: value, goal: goal, detail: detail)
        let all = rows.withLock { rows in
            rows.removeAll { $0.name == name }
            rows.append(row)
            return rows
        }
        print(Self.format(row))
        writeJSON(all)
        if all.count > 1 { print(Self.table(all)) }
    }

    static func format(_ row: Row) -> String {
        let value = String(format: "%10.4f", row.value)
        return "\(row.name.padding(toLength: 40, withPad: " ", startingAt: 0)) \(value)  goal \(row.goal.padding(toLength: 7, withPad: " ", startingAt: 0))  \(row.detail)"
    }

    static func table(_ rows: [Row]) -> String {
        let header = "measure".padding(toLength: 40, withPad: " ", startingAt: 0) + "      value  goal      detail"
        let build = Bench.isDebugBuild ? "  (debug build: the figures are meaningless; use -c release)" : ""
        return (["── H264Benchmarks report\(build)", header] + rows.map(format)).joined(separator: "\n")
    }

    private func writeJSON(_ rows: [Row]) {
        guard let path = ProcessInfo.processInfo.environment["H264_BENCHMARK_REPORT"], !path.isEmpty else { return }
        var object: [String: Double] = [:]
        for row in rows { object[row.name] = row.value.isFinite ? row.value : -1 }
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            print("H264Benchmarks: cannot write \(path): \(error)")
        }
    }
}
