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
    static func encodeAll(_ frames: [VideoFrame], _ session: EncoderSession?) {
        guard let session else { return }
        for (index, frame) in frames.enumerated() { try? session.encode(frame, presentationTimeStamp: pts(index)) }
        try? session.completeFrames()
    }

    /// The C loop over the frames: output bytes, wall seconds, and the CPU seconds of its
    /// thread for frames 2…N (see `cx264_baseline_encode`).
    func runBaseline(threads: Int) -> (bytes: [UInt8], seconds: Double, cpuSeconds: Double) {
        let capacity = Frames720p.frames.count * Frames720p.width * Frames720p.height * 2
        var out = [UInt8](repeating: 0, count: capacity)
        var seconds = 0.0, cpuSeconds = 0.0
        let count = withBaselineSettings(threads: threads) { s in
            Frames720p.frames.withPlaneBases { bases in
                out.withUnsafeMutableBufferPointer { o in
                    cx264_baseline_encode(&s, bases.baseAddress, Int32(bases.count), o.baseAddress, capacity, &seconds, &cpuSeconds)
                }
            }
        }
        return (Array(out.prefix(max(count, 0))), count < 0 ? .nan : seconds, count < 0 ? .nan : cpuSeconds)
    }

    /// ``runBaseline(threads:)`` on a libdispatch worker thread — the kind of thread a
    /// session's serial queue encodes on (libdispatch sets its workers' scheduling itself, so
    /// a C loop on the test's own thread would not be measured alike) — waited for here.
    func runBaselineOnWorker(threads: Int, queue: DispatchQueue) -> (bytes: [UInt8], seconds: Double, cpuSeconds: Double) {
        let result = Locked<(bytes: [UInt8], seconds: Double, cpuSeconds: Double)?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.async {
            let run = runBaseline(threads: threads)
            result.withLock { $0 = run }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// `encoder_vs_c_*`: wall time of the session ÷ the C loop's, both encoding on a libdispatch
    /// worker, and beside it (`encoder_vs_c_1thread_thread_cpu`) the encoding thread's CPU time
    /// (`CLOCK_THREAD_CPUTIME_ID`). The CPU figure covers frames 2…30: read in the output handler after each frame
    /// (the session's encoding thread) and in the C loop after each frame's output was copied.
    @Test(arguments: [("encoder_vs_c_1thread", 1), ("encoder_vs_c_auto", 0)])
    func encoderVersusC(name: String, threads: Int) throws {
        let configuration = benchmarkConfiguration(threads: threads == 0 ? nil : threads)
        let collector = Collector<EncodedFrame>(capacity: frames.count)
        let cpuReadings = ThreadCPUReadings(capacity: frames.count)
        let baselineQueue = DispatchQueue(label: "H264Benchmarks.CLoop")
        var session: EncoderSession?
        func setUp() {
            session?.invalidate()
            collector.removeAll()
            cpuReadings.removeAll()
            session = try? EncoderSession(width: Frames720p.width, height: Frames720p.height,
                                          configuration: configuration, outputHandler: { frame in
                                              collector.append(frame)
                                              cpuReadings.record()
                                          })
            _ = try? session?.prepare()
        }
        func encodeAll() { Self.encodeAll(frames, session) }
        // Same bytes first (x264 is deterministic for the same parameters and input).
        setUp()
        encodeAll()
        let reference = runBaselineOnWorker(threads: threads, queue: baselineQueue)
        #expect(reference.seconds.isFinite)
        #expect(collector.count == frames.count)
        #expect(collector.bytes == reference.bytes)

        var cSeconds: [Double] = [], cCPU: [Double] = []
        let times = Bench.interleave(
            setUpMeasure: setUp, measure: encodeAll,
            baseline: {
                let run = runBaselineOnWorker(threads: threads, queue: baselineQueue)
                cSeconds.append(run.seconds)
                cCPU.append(run.cpuSeconds)
            })
        session?.invalidate()
        // The C loop times itself without opening x264; use its own median.
        let c = Bench.median(cSeconds.suffix(Bench.runs))
        // The timed runs are the last ones (before them: the check above and the warm-up).
        let cpuMeasure = Bench.median(Array(cpuReadings.perRunSeconds(frames: frames.count).suffix(Bench.runs)))
        let cpuBaseline = Bench.median(cCPU.suffix(Bench.runs))
        BenchmarkReport.shared.record(
            name, times.measure / c, goal: "≤ 1.01",
            detail: String(format: "wall: H264Encoder %.1f ms, C loop %.1f ms for %d frames 1280x720 (%.1f fps), both on libdispatch workers",
                           times.measure * 1e3, c * 1e3, frames.count, Double(frames.count) / times.measure))
        // With x264's own threads (auto) the encoding thread does only part of the work: the
        // thread CPU time is compared for one thread only.
        guard threads == 1 else { return }
        BenchmarkReport.shared.record(
            name + "_thread_cpu", cpuMeasure / cpuBaseline, goal: "≤ 1.01",
            detail: String(format: "encoding thread CPU (CLOCK_THREAD_CPUTIME_ID), frames 2…%d: H264Encoder %.1f ms, C loop %.1f ms",
                           frames.count, cpuMeasure * 1e3, cpuBaseline * 1e3))
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
        let times = Bench.interleave(
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
        let times = Bench.interleave(
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
            "allocations_per_frame", Double(swift - c) / Double(frames), goal: "≤ 2",
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
                    _ = cx264_baseline_encode(&s, bases.baseAddress, Int32(bases.count), nil, 1 << 26, &seconds, nil)
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
