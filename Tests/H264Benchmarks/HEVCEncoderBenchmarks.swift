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
        c.x264Preset = .ultrafast
        c.x264Tune = .zerolatency
        c.constantRateFactor = 28
        c.allowFrameReordering = false
        c.expectedFrameRate = 30
        c.threads = 1
        return c
    }

    /// The C loop on a libdispatch worker (the kind of thread the session's queue encodes on):
    /// its output bytes and the seconds it timed itself (opening x265 untimed).
    static func runBaseline(queue: DispatchQueue) -> (bytes: [UInt8], seconds: Double) {
        let result = Locked<(bytes: [UInt8], seconds: Double)?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.async {
            let capacity = Frames720p.frames.count * Frames720p.width * Frames720p.height
            var out = [UInt8](repeating: 0, count: capacity)
            var seconds = 0.0
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
                                cx265_baseline_encode(&s, bases.baseAddress, Int32(bases.count), o.baseAddress, capacity, &seconds)
                            }
                        }
                    }
                }
            }
            result.withLock { $0 = (Array(out.prefix(max(count, 0))), count < 0 ? .nan : seconds) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Wall time of the session (prepared, untimed) encoding and completing the 30 frames ÷ the
    /// C loop's; first, the same bytes from both (x265 is deterministic for the same
    /// parameters and input with one thread).
    @Test func hevcEncoderVersusC() throws {
        let collector = Collector<EncodedFrame>(capacity: frames.count)
        let queue = DispatchQueue(label: "H264Benchmarks.CX265Loop")
        var session: EncoderSession?
        func setUp() {
            session?.invalidate()
            collector.removeAll()
            let opened = try? EncoderSession(width: Frames720p.width, height: Frames720p.height,
                                             configuration: Self.configuration, outputHandler: collector.handler)
            // Opened on the C loop's queue: x265's worker threads take the scheduling of the
            // thread that opens the encoder, and the C loop opens its own on a libdispatch worker.
            queue.sync { _ = try? opened?.prepare() }
            session = opened
        }
        func encodeAll() { EncoderBenchmarks.encodeAll(frames, session) }
        setUp()
        encodeAll()
        let reference = Self.runBaseline(queue: queue)
        #expect(reference.seconds.isFinite)
        #expect(collector.count == frames.count)
        #expect(collector.bytes == reference.bytes)

        var cSeconds: [Double] = []
        let times = Bench.interleave(setUpMeasure: setUp, measure: encodeAll,
                                     baseline: { cSeconds.append(Self.runBaseline(queue: queue).seconds) })
        session?.invalidate()
        let c = Bench.median(cSeconds.suffix(Bench.runs))
        BenchmarkReport.shared.record(
            "hevc_encoder_vs_c", times.measure / c, goal: "0.97…1.02",
            detail: String(format: "wall: H264Encoder (x265) %.1f ms, C loop %.1f ms for %d frames 1280x720 (%.1f fps), both on libdispatch workers",
                           times.measure * 1e3, c * 1e3, frames.count, Double(frames.count) / times.measure))
    }
}
}
#endif
