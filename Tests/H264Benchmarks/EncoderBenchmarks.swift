import CX264Baseline
import Foundation
import H264
import H264Encoder
import H264TestSupport
import Synchronization
import Testing

/// 720p I420 frames in memory: the 30 frames of `Fixtures/cars_320x240_30f.y4m` (real
/// footage) scaled to 1280 × 720 by nearest neighbour.
enum Frames720p {
    static let width = 1280
    static let height = 720

    static let frames: [[UInt8]] = {
        guard let y4m = try? TestFixtures.localData("cars_320x240_30f.y4m") else { return [] }
        let (sw, sh) = (320, 240)
        let frameBytes = sw * sh * 3 / 2
        var sources: [ArraySlice<UInt8>] = []
        var i = (y4m.firstIndex(of: 0x0A) ?? y4m.count) + 1
        while i < y4m.count, let end = y4m[i...].firstIndex(of: 0x0A), end + 1 + frameBytes <= y4m.count {
            sources.append(y4m[(end + 1)..<(end + 1 + frameBytes)])
            i = end + 1 + frameBytes
        }
        return sources.map { scale($0, from: (sw, sh)) }
    }()

    static func scale(_ source: ArraySlice<UInt8>, from size: (Int, Int)) -> [UInt8] {
        let (sw, sh) = size
        var out = [UInt8](repeating: 0, count: width * height * 3 / 2)
        let base = source.startIndex
        func plane(_ srcOffset: Int, _ srcW: Int, _ srcH: Int, _ dstOffset: Int, _ dstW: Int, _ dstH: Int) {
            for y in 0..<dstH {
                let sy = y * srcH / dstH
                for x in 0..<dstW { out[dstOffset + y * dstW + x] = source[base + srcOffset + sy * srcW + x * srcW / dstW] }
            }
        }
        plane(0, sw, sh, 0, width, height)
        plane(sw * sh, sw / 2, sh / 2, width * height, width / 2, height / 2)
        plane(sw * sh * 5 / 4, sw / 2, sh / 2, width * height * 5 / 4, width / 2, height / 2)
        return out
    }

    static func videoFrames() throws -> [VideoFrame] {
        try frames.map { try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: $0) }
    }
}

/// Collects a session's outputs (the output handler runs on the session's queue).
final class Collector: Sendable {
    private let frames = Mutex<[EncodedFrame]>([])
    init(capacity: Int) { frames.withLock { $0.reserveCapacity(capacity) } }
    var handler: EncoderSession.OutputHandler { { [self] frame in frames.withLock { $0.append(frame) } } }
    var count: Int { frames.withLock { $0.count } }
    var bytes: [UInt8] { frames.withLock { Array($0.map(\.data).joined()) } }
    func removeAll() { frames.withLock { $0.removeAll(keepingCapacity: true) } }
}

/// The encoder settings of `encoder_vs_c_*`: ultrafast, zerolatency, CRF 23, no B-frames,
/// High profile, 30 fps; threads 1 or x264's choice.
func benchmarkConfiguration(threads: Int?) -> EncoderConfiguration {
    var c = EncoderConfiguration()
    c.realTime = true
    c.x264Preset = .ultrafast
    c.x264Tune = .zerolatency
    c.constantRateFactor = 23
    c.allowFrameReordering = false
    c.profile = .high
    c.expectedFrameRate = 30
    c.threads = threads
    return c
}

/// The same settings for the C loop.
func baselineSettings(threads: Int) -> (cx264_baseline_settings, keep: [ContiguousArray<CChar>]) {
    let strings = ["ultrafast", "zerolatency", "high"].map { ContiguousArray($0.utf8CString) }
    var s = cx264_baseline_settings()
    s.width = Int32(Frames720p.width)
    s.height = Int32(Frames720p.height)
    s.threads = Int32(threads)
    s.crf = 23
    s.no_bframes = 1
    s.fps_num = 30
    s.fps_den = 1
    return (s, strings)
}

extension AllBenchmarks {
@Suite("Encoder", .enabled(if: !Frames720p.frames.isEmpty))
struct EncoderBenchmarks {
    let frames: [VideoFrame]
    init() throws { frames = try Frames720p.videoFrames() }

    /// The C loop over the frames: output bytes and seconds.
    func runBaseline(threads: Int) -> (bytes: [UInt8], seconds: Double) {
        let (settings, strings) = baselineSettings(threads: threads)
        let capacity = Frames720p.frames.count * Frames720p.width * Frames720p.height * 2
        var out = [UInt8](repeating: 0, count: capacity)
        var seconds = 0.0
        let count = strings[0].withUnsafeBufferPointer { preset in
            strings[1].withUnsafeBufferPointer { tune in
                strings[2].withUnsafeBufferPointer { profile in
                    var s = settings
                    s.preset = preset.baseAddress
                    s.tune = tune.baseAddress
                    s.profile = profile.baseAddress
                    return Frames720p.frames.withPlaneBases { bases in
                        out.withUnsafeMutableBufferPointer { o in
                            cx264_baseline_encode(&s, bases.baseAddress, Int32(bases.count), o.baseAddress, capacity, &seconds)
                        }
                    }
                }
            }
        }
        return (Array(out.prefix(max(count, 0))), count < 0 ? .nan : seconds)
    }

    @Test(arguments: [("encoder_vs_c_1thread", 1), ("encoder_vs_c_auto", 0)])
    func encoderVersusC(name: String, threads: Int) throws {
        let configuration = benchmarkConfiguration(threads: threads == 0 ? nil : threads)
        let collector = Collector(capacity: frames.count)
        var session: EncoderSession?
        func setUp() {
            session?.invalidate()
            collector.removeAll()
            session = try? EncoderSession(width: Frames720p.width, height: Frames720p.height,
                                          configuration: configuration, outputHandler: collector.handler)
            _ = try? session?.prepare()
        }
        func encodeAll() {
            guard let session else { return }
            for (index, frame) in frames.enumerated() {
                try? session.encode(frame, presentationTimeStamp: .milliseconds(index * 100) / 3)
            }
            try? session.completeFrames()
        }
        // Same bytes first (x264 is deterministic for the same parameters and input).
        setUp()
        encodeAll()
        let reference = runBaseline(threads: threads)
        #expect(reference.seconds.isFinite)
        #expect(collector.count == frames.count)
        #expect(collector.bytes == reference.bytes)

        var cSeconds: [Double] = []
        let times = Bench.interleave(
            setUpMeasure: setUp, measure: encodeAll,
            baseline: { cSeconds.append(runBaseline(threads: threads).seconds) })
        session?.invalidate()
        // The C loop times itself without opening x264; use its own median.
        let c = Bench.median(cSeconds.suffix(Bench.runs))
        BenchmarkReport.shared.record(
            name, times.measure / c, goal: "≤ 1.01",
            detail: String(format: "H264Encoder %.1f ms, C loop %.1f ms for %d frames 1280x720 (%.1f fps)",
                           times.measure * 1e3, c * 1e3, frames.count, Double(frames.count) / times.measure))
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
