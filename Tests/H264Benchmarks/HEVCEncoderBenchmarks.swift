#if HEVCEncoding
import CX265Baseline
import Foundation
import H264
import H264Encoder
import H264TestSupport
import Testing

extension AllBenchmarks {
/// `hevc_encoder_vs_c`: the session's H.265 path against a plain C loop over libx265
/// (`Sources/CX265Baseline`), the same frames and settings.
@Suite("HEVC encoder")
struct HEVCEncoderBenchmarks {
    let frames: [VideoFrame]
    init() throws { frames = try Frames720p.videoFrames() }

    /// x265 `ultrafast` with tune `zerolatency`, CRF 28, no B-frames, Main, 30 fps, one
    /// worker thread (`pools` 1): what the session and the C loop both set.
    static var configuration: EncoderConfiguration {
        var c = EncoderConfiguration()
        c.codec = .hevc
        c.hevcProfile = .main
        c.realTime = true
        c.preset = .ultrafast
        c.tune = .zerolatency
        c.constantRateFactor = 28
        c.allowFrameReordering = false
        c.expectedFrameRate = 30
        c.threads = 1
        return c
    }

    /// The C loop on a libdispatch worker (the kind of thread the session's queue encodes on):
    /// its output bytes, and the wall and process CPU seconds it timed itself (opening and
    /// closing x265 untimed); nil when x265 failed.
    static func runBaseline(queue: DispatchQueue) -> (bytes: [UInt8], seconds: Double, cpuSeconds: Double)? {
        let result = Locked<(bytes: [UInt8], seconds: Double, cpuSeconds: Double)?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.async {
            let capacity = Frames720p.frames.count * Frames720p.width * Frames720p.height
            var out = [UInt8](repeating: 0, count: capacity)
            var seconds = 0.0, cpuSeconds = 0.0
            var s = cx265_baseline_settings()
            s.width = Int32(Frames720p.width)
            s.height = Int32(Frames720p.height)
            s.bit_depth = 8
            s.threads = 1
            s.crf = 28
            s.no_bframes = 1
            s.fps_num = 30
            s.fps_den = 1
            let count = "ultrafast".withCString { preset in
                "zerolatency".withCString { tune in
                    "main".withCString { profile in
                        s.preset = preset
                        s.tune = tune
                        s.profile = profile
                        return Frames720p.frames.withPlaneBases { bases in
                            out.withUnsafeMutableBufferPointer { o in
                                cx265_baseline_encode(&s, bases.baseAddress, Int32(bases.count), o.baseAddress, capacity, &seconds, &cpuSeconds)
                            }
                        }
                    }
                }
            }
            result.withLock { $0 = count < 0 ? nil : (Array(out.prefix(count)), seconds, cpuSeconds) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    /// This process's CPU time (every thread: the session's queue worker, the caller's, x265's
    /// pool) while the session (prepared, untimed) encodes and completes the 30 frames ÷ the C
    /// loop's over the same work, every thread pinned to the same CPU for both (``CPUPinning``),
    /// runs interleaved (ABBA…), the median of the ratios of each pair of runs over ``EncoderBenchmarks/sessionVersusCRuns``;
    /// `hevc_encoder_vs_c_wall` is the wall-time ratio of the same runs. First, the same bytes
    /// from both (x265 is deterministic for the same parameters and input with one thread).
    @Test func hevcEncoderVersusC() throws {
        let cpus = CPUPinning.cpus(forThreads: 1)
        try CPUPinning.withProcess(pinnedTo: cpus) { try measureHEVCEncoderVersusC(cpus: cpus) }
    }

    func measureHEVCEncoderVersusC(cpus: [Int]) throws {
        let collector = Collector<EncodedFrame>(capacity: frames.count)
        let queue = DispatchQueue(label: "H264Benchmarks.CX265Loop")
        var session: EncoderSession?
        func setUp() throws {
            session?.invalidate()
            collector.removeAll()
            let opened = try EncoderSession(width: Frames720p.width, height: Frames720p.height,
                                            configuration: Self.configuration, outputHandler: collector.handler)
            session = opened
            // Opened on the C loop's queue: x265's worker threads take the scheduling of the
            // thread that opens the encoder, and the C loop opens its own on a libdispatch worker.
            try queue.sync { _ = try opened.prepare() }
        }
        func encodeAll() throws {
            try EncoderBenchmarks.encodeAll(frames, session)
            try #require(collector.count == frames.count, "frames out of the session: \(collector.count)")
        }
        try setUp()
        try encodeAll()
        let reference = try #require(Self.runBaseline(queue: queue), "cx265_baseline_encode failed")
        #expect(collector.bytes == reference.bytes)

        let runs = EncoderBenchmarks.sessionVersusCRuns
        var c: [(seconds: Double, cpuSeconds: Double)] = []
        let times = try Bench.interleave(runs: runs, setUpMeasure: setUp, measure: encodeAll, baseline: {
            let run = try #require(Self.runBaseline(queue: queue), "cx265_baseline_encode failed")
            try #require(run.bytes == reference.bytes, "the C loop's output changed")
            c.append((run.seconds, run.cpuSeconds))
        })
        session?.invalidate()
        let timed = c.suffix(runs)
        let cWall = Bench.median(timed.map(\.seconds)), cCPU = Bench.median(timed.map(\.cpuSeconds))
        BenchmarkReport.shared.record(
            "hevc_encoder_vs_c", Bench.pairedRatio(times.measureCPUs, timed.map(\.cpuSeconds)), goal: "0.97…1.02",
            detail: String(format: "process CPU (CLOCK_PROCESS_CPUTIME_ID, every thread), median of the ratios of %d interleaved pairs of runs (medians: H264Encoder (x265) %.1f ms, C loop %.1f ms) for %d frames 1280x720 (pools 1, every thread pinned to ",
                           runs, times.measureCPU * 1e3, cCPU * 1e3, frames.count)
                + CPUPinning.label(cpus) + "); run-to-run spread " + EncoderBenchmarks.spread(times.measureCPUs) + " vs "
                + EncoderBenchmarks.spread(timed.map(\.cpuSeconds)))
        BenchmarkReport.shared.record(
            "hevc_encoder_vs_c_wall", Bench.pairedRatio(times.measures, timed.map(\.seconds)), goal: "—",
            detail: String(format: "wall time of the same runs: H264Encoder (x265) %.1f ms, C loop %.1f ms (%.1f fps); run-to-run spread ",
                           times.measure * 1e3, cWall * 1e3, Double(frames.count) / times.measure)
                + EncoderBenchmarks.spread(times.measures) + " vs " + EncoderBenchmarks.spread(timed.map(\.seconds)))
    }
}
}
#endif
