import CX264Baseline
import Foundation
import H264
import H264Encoder
import H264TestSupport
import MallocInterposerSwift
import Testing

extension Collector where Element == EncodedFrame {
    /// Every collected output's bytes, back to back.
    var bytes: [UInt8] { Array(all.map(\.data).joined()) }
}

extension AllBenchmarks {
@Suite("Encoder")
struct EncoderBenchmarks {
    let frames: [VideoFrame]
    let smallFrames: [VideoFrame]
    init() throws {
        frames = try Frames720p.videoFrames()
        smallFrames = try Frames720p.smallVideoFrames()
    }

    static func pts(_ index: Int) -> Duration { .milliseconds(index * 100) / 3 }

    /// The timed part of `encoder_vs_c_*` and `hevc_encoder_vs_c`: every frame at 30 fps into
    /// the (prepared) session, then `completeFrames()`.
    static func encodeAll(_ frames: [VideoFrame], _ session: EncoderSession?) throws {
        let session = try #require(session)
        for (index, frame) in frames.enumerated() { try session.encode(frame, presentationTimeStamp: pts(index)) }
        try session.completeFrames()
    }

    /// One C loop run: its output, and its wall seconds, encoding thread CPU seconds (frames
    /// 2…N) and process CPU seconds over the timed part (see `cx264_baseline_encode`).
    struct BaselineRun {
        var bytes: [UInt8]
        var seconds: Double
        var cpuSeconds: Double
        var processSeconds: Double
    }

    /// The C loop over the frames (x264 failing is a test failure).
    func runBaseline(threads: Int) throws -> BaselineRun {
        let capacity = Frames720p.frames.count * Frames720p.width * Frames720p.height * 2
        var out = [UInt8](repeating: 0, count: capacity)
        var seconds = 0.0, cpuSeconds = 0.0, processSeconds = 0.0
        let count = withBaselineSettings(threads: threads) { s in
            Frames720p.frames.withPlaneBases { bases in
                out.withUnsafeMutableBufferPointer { o in
                    cx264_baseline_encode(&s, bases.baseAddress, Int32(bases.count), o.baseAddress, capacity, &seconds, &cpuSeconds,
                                          &processSeconds)
                }
            }
        }
        try #require(count >= 0, "cx264_baseline_encode failed")
        return BaselineRun(bytes: Array(out.prefix(count)), seconds: seconds, cpuSeconds: cpuSeconds, processSeconds: processSeconds)
    }

    /// ``runBaseline(threads:)`` on a libdispatch worker thread — the kind of thread a
    /// session's serial queue encodes on (libdispatch sets its workers' scheduling itself, so
    /// a C loop on the test's own thread would not be measured alike) — waited for here.
    func runBaselineOnWorker(threads: Int, queue: DispatchQueue) throws -> BaselineRun {
        let result = Locked<Result<BaselineRun, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.async {
            let run = Result { try runBaseline(threads: threads) }
            result.withLock { $0 = run }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }

    /// Timed runs of each side in the session-vs-C benchmarks: at least 25 (the median of the
    /// ratios of 25 interleaved pairs), one in a debug build.
    static var sessionVersusCRuns: Int { Bench.isDebugBuild ? 1 : max(Bench.runs, 25) }

    /// `encoder_vs_c_*`: this process's CPU time (every thread: the session's queue worker,
    /// the caller's, x264's own) while the session encodes the frames ÷ the C loop's over the
    /// same work, both encoding on a libdispatch worker, every thread of the process pinned to
    /// the same CPUs for both (``CPUPinning``), runs interleaved (ABBA…), the median of the ratios
    /// of each pair of runs (``Bench/pairedRatio(_:_:)``) over ``sessionVersusCRuns`` pairs. Beside it: `…_wall`, the wall-time ratio of the same runs, and for
    /// one thread `…_thread_cpu`, the encoding thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) for
    /// frames 2…30, read in the output handler (the session's encoding thread) and in the C loop
    /// after each frame's output was copied.
    @Test(arguments: [("encoder_vs_c_1thread", 1), ("encoder_vs_c_auto", 0)])
    func encoderVersusC(name: String, threads: Int) throws {
        let cpus = CPUPinning.cpus(forThreads: threads)
        try CPUPinning.withProcess(pinnedTo: cpus) { try measureEncoderVersusC(name: name, threads: threads, cpus: cpus) }
    }

    func measureEncoderVersusC(name: String, threads: Int, cpus: [Int]) throws {
        let configuration = benchmarkConfiguration(threads: threads == 0 ? nil : threads)
        let collector = Collector<EncodedFrame>(capacity: frames.count)
        let cpuReadings = ThreadCPUReadings(capacity: frames.count)
        let baselineQueue = DispatchQueue(label: "H264Benchmarks.CLoop")
        var session: EncoderSession?
        func setUp() throws {
            session?.invalidate()
            collector.removeAll()
            cpuReadings.removeAll()
            let opened = try EncoderSession(width: Frames720p.width, height: Frames720p.height,
                                            configuration: configuration, outputHandler: { frame in
                                                collector.append(frame)
                                                cpuReadings.record()
                                            })
            session = opened
            _ = try opened.prepare()
        }
        func encodeAll() throws {
            try Self.encodeAll(frames, session)
            // Every frame out, no more, in every timed run.
            try #require(collector.count == frames.count, "frames out of the session: \(collector.count)")
        }
        // Same bytes first (x264 is deterministic for the same parameters and input).
        try setUp()
        try encodeAll()
        let reference = try runBaselineOnWorker(threads: threads, queue: baselineQueue)
        #expect(collector.bytes == reference.bytes)

        let runs = Self.sessionVersusCRuns
        var c: [BaselineRun] = []
        let times = try Bench.interleave(
            runs: runs, setUpMeasure: setUp, measure: encodeAll,
            baseline: {
                let run = try runBaselineOnWorker(threads: threads, queue: baselineQueue)
                try #require(run.bytes == reference.bytes, "the C loop's output changed")
                c.append(run)
            })
        session?.invalidate()
        // The C loop times itself without opening and closing x264 (the session's are in the
        // untimed set-up); the timed runs are the last ones (before them: the warm-up).
        let timed = c.suffix(runs)
        let cWall = Bench.median(timed.map(\.seconds)), cCPU = Bench.median(timed.map(\.processSeconds))
        let cpuMeasure = Bench.median(Array(cpuReadings.perRunSeconds(frames: frames.count).suffix(runs)))
        let cpuBaseline = Bench.median(timed.map(\.cpuSeconds))
        let placement = "\(threads == 0 ? "x264's threads" : "1 thread"), every thread pinned to \(CPUPinning.label(cpus))"
        BenchmarkReport.shared.record(
            name, Bench.pairedRatio(times.measureCPUs, timed.map(\.processSeconds)), goal: "≤ 1.01",
            detail: String(format: "process CPU (CLOCK_PROCESS_CPUTIME_ID, every thread), median of the ratios of %d interleaved pairs of runs (medians: H264Encoder %.1f ms, C loop %.1f ms) for %d frames 1280x720 (",
                           runs, times.measureCPU * 1e3, cCPU * 1e3, frames.count)
                + placement + "); run-to-run spread " + Self.spread(times.measureCPUs) + " vs " + Self.spread(timed.map(\.processSeconds)))
        BenchmarkReport.shared.record(
            name + "_wall", Bench.pairedRatio(times.measures, timed.map(\.seconds)), goal: "—",
            detail: String(format: "wall time of the same runs: H264Encoder %.1f ms, C loop %.1f ms (%.1f fps); run-to-run spread ",
                           times.measure * 1e3, cWall * 1e3, Double(frames.count) / times.measure)
                + Self.spread(times.measures) + " vs " + Self.spread(timed.map(\.seconds)))
        // With x264's own threads (auto) the encoding thread does only part of the work: the
        // thread CPU time is compared for one thread only.
        guard threads == 1 else { return }
        BenchmarkReport.shared.record(
            name + "_thread_cpu", cpuMeasure / cpuBaseline, goal: "≤ 1.01",
            detail: String(format: "encoding thread CPU (CLOCK_THREAD_CPUTIME_ID), frames 2…%d: H264Encoder %.1f ms, C loop %.1f ms",
                           frames.count, cpuMeasure * 1e3, cpuBaseline * 1e3))
    }

    /// `±N %`: half the range of `values` over their median (the interquartile half-range, for
    /// 8 or more values).
    static func spread(_ values: [Double]) -> String {
        let sorted = values.sorted(), median = Bench.median(values)
        guard sorted.count > 1, median > 0 else { return "—" }
        let (low, high) = sorted.count >= 8 ? (sorted[sorted.count / 4], sorted[sorted.count * 3 / 4]) : (sorted[0], sorted[sorted.count - 1])
        return String(format: "±%.1f %%", (high - low) / 2 / median * 100)
    }

    /// `switchToPrewarmedSession()` to a prewarmed 720p encoder ÷ creating and preparing a
    /// 720p session (``EncoderConfiguration/liveCapture``).
    @Test func prewarmSwitchVersusCold() throws {
        let configuration = EncoderConfiguration.liveCapture
        var sessions: [EncoderSession] = []
        var failures = 0
        func setUpSwitch() {
            for session in sessions { session.invalidate() }
            sessions = []
            do {
                let session = try EncoderSession(width: 640, height: 360, configuration: configuration)
                _ = try session.prepare()
                try session.prewarm(width: Frames720p.width, height: Frames720p.height)
                session.waitForQueuedFramesQuietly()
                sessions.append(session)
            } catch { failures += 1 }
        }
        let times = try Bench.interleave(
            setUpMeasure: setUpSwitch,
            measure: { do { try sessions.last?.switchToPrewarmedSession() } catch { failures += 1 } },
            setUpBaseline: { for session in sessions { session.invalidate() }; sessions = [] },
            baseline: {
                do {
                    let session = try EncoderSession(width: Frames720p.width, height: Frames720p.height, configuration: configuration)
                    _ = try session.prepare()
                    sessions.append(session)
                } catch { failures += 1 }
            })
        for session in sessions { session.invalidate() }
        #expect(failures == 0)
        BenchmarkReport.shared.record(
            "prewarm_switch_vs_cold", times.measure / times.baseline, goal: "≤ 0.01",
            detail: String(format: "switch %.1f µs, create + prepare %.2f ms (liveCapture, 1280x720)",
                           times.measure * 1e6, times.baseline * 1e3))
    }

    /// Encode time (`encode` until its output is delivered) of the first 720p frame after a
    /// switch from 640 × 360 ÷ that of a forced IDR of the same picture in a warm 720p session.
    ///
    /// The warm session encodes three ordinary frames (untimed) before each timed IDR, as a live
    /// session does between keyframes: forcing IDR after IDR would drain its VBV, raise the
    /// quantiser and make the baseline frames smaller and cheaper than any real keyframe.
    @Test func firstFrameAfterSwitchVersusIDR() throws {
        let configuration = EncoderConfiguration.liveCapture
        let collector = Collector<EncodedFrame>(capacity: 256)
        let warm = try EncoderSession(width: Frames720p.width, height: Frames720p.height, configuration: configuration,
                                      outputHandler: collector.handler)
        var warmIndex = 0
        func encodeWarm(forceKeyframe: Bool) throws {
            let frame = forceKeyframe ? frames[3] : frames[4 + warmIndex % (frames.count - 4)]
            try warm.encode(frame, presentationTimeStamp: Self.pts(warmIndex), forceKeyframe: forceKeyframe)
            warmIndex += 1
        }
        for _ in 0..<5 { try encodeWarm(forceKeyframe: false) }
        try warm.waitForQueuedFrames()
        var switching: EncoderSession?
        var failures = 0
        var switchFaults = 0
        var idrFaults = 0
        let switchCollector = Collector<EncodedFrame>(capacity: 64)
        let times = try Bench.interleave(
            setUpMeasure: {
                switching?.invalidate()
                do {
                    let session = try EncoderSession(width: 640, height: 360, configuration: configuration,
                                                     outputHandler: switchCollector.handler)
                    for i in 0..<3 { try session.encode(smallFrames[i], presentationTimeStamp: Self.pts(i)) }
                    try session.prewarm(width: Frames720p.width, height: Frames720p.height)
                    try session.switchToPrewarmedSession()
                    try session.waitForQueuedFrames()
                    switching = session
                } catch { failures += 1 }
            },
            measure: {
                let before = Bench.pageFaults()
                do {
                    try switching?.encode(frames[3], presentationTimeStamp: Self.pts(3))
                    try switching?.waitForQueuedFrames()
                } catch { failures += 1 }
                switchFaults += Bench.pageFaults() - before
            },
            setUpBaseline: {
                do {
                    for _ in 0..<3 { try encodeWarm(forceKeyframe: false) }
                    try warm.waitForQueuedFrames()
                } catch { failures += 1 }
            },
            baseline: {
                let before = Bench.pageFaults()
                do {
                    try encodeWarm(forceKeyframe: true)
                    try warm.waitForQueuedFrames()
                } catch { failures += 1 }
                idrFaults += Bench.pageFaults() - before
            })
        switching?.invalidate()
        warm.invalidate()
        #expect(failures == 0)
        // Every measured frame came out at once (4 per switching session, one per warm encode),
        // and each measured frame is an IDR.
        let rounds = Bench.runs + Bench.warmUpRuns
        let switched = switchCollector.all
        #expect(switched.count == 4 * rounds)
        #expect(switched.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element.frameType == .idr })
        #expect(collector.count == warmIndex)
        let idrs = collector.all.filter { $0.frameType == .idr }
        #expect(idrs.count == rounds + 1)
        // The sizes say whether the two sides coded comparable pictures (rate control decides
        // the quantiser; a much smaller baseline frame would be cheaper to code).
        let firstBytes = switched.enumerated().filter { $0.offset % 4 == 3 }.map { Double($0.element.data.count) }
        let idrBytes = idrs.dropFirst().map { Double($0.data.count) }
        BenchmarkReport.shared.record(
            "first_frame_after_switch_vs_idr", times.measure / times.baseline, goal: "≤ 1.1",
            detail: String(format: "first frame after switch %.2f ms (%.0f bytes), forced IDR of the same picture %.2f ms (%.0f bytes) (liveCapture, 1280x720); page faults per frame %d vs %d",
                           times.measure * 1e3, Bench.median(firstBytes), times.baseline * 1e3, Bench.median(idrBytes),
                           switchFaults / rounds, idrFaults / rounds))
    }

    /// Frames accepted but not yet output, after each frame has been handled, with
    /// ``EncoderConfiguration/ultraLowLatency`` (the largest over 30 frames).
    @Test func ultraLowLatencyDelayFrames() throws {
        let collector = Collector<EncodedFrame>(capacity: frames.count)
        let session = try EncoderSession(width: Frames720p.width, height: Frames720p.height,
                                         configuration: .ultraLowLatency, outputHandler: collector.handler)
        var delay = 0
        for (index, frame) in frames.enumerated() {
            try session.encode(frame, presentationTimeStamp: Self.pts(index))
            try session.waitForQueuedFrames()
            delay = max(delay, index + 1 - collector.count)
        }
        try session.completeFrames()
        session.invalidate()
        #expect(collector.count == frames.count)
        BenchmarkReport.shared.record(
            "ultra_low_latency_delay_frames", Double(delay), goal: "0",
            detail: "largest number of frames in flight after encode + waitForQueuedFrames, 30 frames 1280x720")
    }

    /// Heap allocations per frame in steady state (60 frames after 10 warm-up frames), all
    /// threads — the Swift session's and x264's own —, counted by ordo-one/malloc-interposer.
    ///
    /// The interposer replaces `malloc` only when preloaded, so this test runs itself again in
    /// a child process (this test binary, `LD_PRELOAD=libMallocInterposerSwift.so`, filtered to
    /// this test) that counts and writes the figures to a file.
    @Test func allocationsPerFrame() throws {
        if let resultPath = Bench.childResultPath {
            let (swift, c, frames) = try countAllocations()
            try "\(swift) \(c) \(frames)".write(toFile: resultPath, atomically: true, encoding: .utf8)
            return
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let library = executable.deletingLastPathComponent().appendingPathComponent("libMallocInterposerSwift.so")
        try #require(FileManager.default.fileExists(atPath: library.path), "no \(library.path)")
        let fields = try Bench.inChild("allocationsPerFrame", environment: ["LD_PRELOAD": library.path]).map { Int($0) }
        try #require(fields.count == 3)
        let (swift, c, frames) = (fields[0], fields[1], fields[2])
        BenchmarkReport.shared.record(
            "allocations_per_frame", Double(swift - c) / Double(frames), goal: "≤ 1.2",
            detail: "H264Encoder \(swift) − C loop \(c) allocations (x264's own) over \(frames) frames (ultrafast, zerolatency, 1 thread, 1280x720); output handler appends to a reserved array")
    }

    /// In a process where malloc-interposer is preloaded: allocations while a warm session
    /// encodes 60 frames, and while the C loop's x264 does the same.
    func countAllocations() throws -> (swift: Int, c: Int, frames: Int) {
        MallocInterposerSwift.initialize()
        let measured = 60
        let configuration = benchmarkConfiguration(threads: 1)
        let collector = Collector<EncodedFrame>(capacity: 128)
        let session = try EncoderSession(width: Frames720p.width, height: Frames720p.height,
                                         configuration: configuration, outputHandler: collector.handler)
        for index in 0..<10 { try session.encode(frames[index], presentationTimeStamp: Self.pts(index)) }
        try session.waitForQueuedFrames()
        MallocInterposerSwift.reset()
        MallocInterposerSwift.hook()
        for index in 10..<(10 + measured) {
            try session.encode(frames[index % frames.count], presentationTimeStamp: Self.pts(index))
        }
        try session.waitForQueuedFrames()
        MallocInterposerSwift.unhook()
        let swift = MallocInterposerSwift.getStatistics().mallocCount
        try session.completeFrames()
        session.invalidate()
        #expect(collector.count == 10 + measured)
        #expect(swift > 0, "malloc-interposer counted nothing: is it preloaded?")

        // The C loop: allocations of encoding `measured` frames minus those of encoding 10
        // (both include opening and closing x264), i.e. x264's per-frame allocations.
        func countC(_ frameCount: Int) -> Int {
            let sources = (0..<frameCount).map { Frames720p.frames[$0 % Frames720p.frames.count] }
            var seconds = 0.0
            return withBaselineSettings(threads: 1) { s in
                sources.withPlaneBases { bases in
                    MallocInterposerSwift.reset()
                    MallocInterposerSwift.hook()
                    _ = cx264_baseline_encode(&s, bases.baseAddress, Int32(bases.count), nil, 1 << 26, &seconds, nil, nil)
                    MallocInterposerSwift.unhook()
                    return MallocInterposerSwift.getStatistics().mallocCount
                }
            }
        }
        let c = countC(10 + measured) - countC(10)
        return (swift, c, measured)
    }
}
}

extension EncoderSession {
    func waitForQueuedFramesQuietly() { try? waitForQueuedFrames() }
}

