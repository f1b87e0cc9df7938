import CAVCodecBaseline
import Foundation
import H264
import H264Decoder
import H264Encoder
import H264TestSupport
import MallocInterposerSwift
import Testing

/// A 720p stream to decode: the 30 cars frames at 1280 × 720 played forth and back (58
/// frames), encoded once by x264 `veryfast` (B-frames, CABAC, 3 references).
enum Stream720p {
    struct Stream: Sendable {
        var frames: [EncodedFrame]
        var format: FormatDescription
        /// Each access unit in Annex-B, SPS and PPS before the IDR: what the C loop sends.
        var annexB: [[UInt8]]
        var reorderDepth: Int
    }

    static func make(_ configuration: EncoderConfiguration) throws -> Stream {
        let source = try Frames720p.videoFrames()
        let sequence = Array(source) + source.dropFirst().dropLast().reversed()
        let collected = Locked<[EncodedFrame]>([])
        let session = try EncoderSession(width: Frames720p.width, height: Frames720p.height, configuration: configuration) { f in
            collected.withLock { $0.append(f) }
        }
        for (i, frame) in sequence.enumerated() {
            try session.encode(frame, presentationTimeStamp: .microseconds(Int64(i) * 33_333))
        }
        try session.completeFrames()
        session.invalidate()
        let frames = collected.withLock { $0 }
        let format = try #require(frames[0].formatDescription)
        let annexB = try frames.map { try AnnexB.fromAVCC($0.data, lengthSize: 4, parameterSets: format.configurationRecord, startCodes: .fourByte) }
        let reorder = format.sequenceParameterSet?.vuiParameters?.maxNumReorderFrames ?? 0
        return Stream(frames: frames, format: format, annexB: annexB, reorderDepth: reorder)
    }

    static let veryfast = Result { () throws -> Stream in
        var c = EncoderConfiguration()
        c.preset = .veryfast
        c.constantRateFactor = 23
        c.expectedFrameRate = 30
        return try make(c)
    }

    static let ultraLowLatency = Result { try make(.ultraLowLatency) }
}

/// Counts frames and (when asked) sums their luma, on the session's queue.
final class DecodedCounter: Sendable {
    private let state = Locked((count: 0, checksum: UInt64(0)))
    let sumLuma: Bool
    init(sumLuma: Bool) { self.sumLuma = sumLuma }
    var handler: DecoderSession.OutputHandler {
        { [self] frame in
            var sum: UInt64 = 0
            if sumLuma {
                _ = frame.withPlane(0) { bytes, plane in
                    for row in 0..<plane.height {
                        for x in 0..<plane.rowByteCount { sum &+= UInt64(bytes[row * plane.bytesPerRow + x]) }
                    }
                }
            }
            state.withLock { $0.count += 1; $0.checksum &+= sum }
        }
    }
    var count: Int { state.withLock { $0.count } }
    var checksum: UInt64 { state.withLock { $0.checksum } }
}

/// Runs the C loop over the stream's packets.
func runDecoderBaseline(_ stream: Stream720p.Stream, threads: Int, lowDelay: Bool = false, checksum: Bool = false) -> (frames: Int, checksum: UInt64, seconds: Double) {
    var seconds = 0.0
    var sum: UInt64 = 0
    let frames = withUnsafeMutablePointer(to: &sum) { sumPointer in
        withPacketPointers(stream.annexB) { pointers, sizes in
            cav_baseline_decode(pointers, sizes, Int32(stream.annexB.count), Int32(threads), lowDelay ? 1 : 0,
                                Int32(stream.reorderDepth), checksum ? sumPointer : nil, &seconds)
        }
    }
    return (frames, sum, seconds)
}

/// Base addresses and sizes of `packets`, valid inside `body`.
func withPacketPointers<R>(_ packets: [[UInt8]], _ body: (UnsafePointer<UnsafePointer<UInt8>?>, UnsafePointer<Int32>) -> R) -> R {
    func recurse(_ index: Int, _ bases: inout [UnsafePointer<UInt8>?]) -> R {
        if index == packets.count {
            let sizes = packets.map { Int32($0.count) }
            return bases.withUnsafeBufferPointer { b in sizes.withUnsafeBufferPointer { body(b.baseAddress!, $0.baseAddress!) } }
        }
        return packets[index].withUnsafeBufferPointer { p in
            bases.append(p.baseAddress)
            return recurse(index + 1, &bases)
        }
    }
    var bases: [UnsafePointer<UInt8>?] = []
    bases.reserveCapacity(packets.count)
    return recurse(0, &bases)
}

extension AllBenchmarks {
@Suite("Decoder")
struct DecoderBenchmarks {
    /// DecoderSession (create, decode every access unit, wait for the frames, invalidate) ÷ the
    /// C loop (open, send and receive, drain, free) on the same 720p stream with the same
    /// threads: this process's CPU time (every thread, libavcodec's own included) over each
    /// run, every thread pinned to the same CPUs for both (``CPUPinning``), runs interleaved
    /// (ABBA…), the median of the ratios of each pair of runs (``Bench/pairedRatio(_:_:)``) over
    /// ``EncoderBenchmarks/sessionVersusCRuns`` pairs; `…_wall` is the wall-time ratio of the same runs.
    @Test(arguments: [("decoder_vs_c_1thread", 1), ("decoder_vs_c_auto", 0)])
    func decoderVersusC(name: String, threads: Int) throws {
        let cpus = CPUPinning.cpus(forThreads: threads)
        try CPUPinning.withProcess(pinnedTo: cpus) { try measureDecoderVersusC(name: name, threads: threads, cpus: cpus) }
    }

    func measureDecoderVersusC(name: String, threads: Int, cpus: [Int]) throws {
        let stream = try Stream720p.veryfast.get()
        let configuration = DecoderConfiguration(threads: threads == 0 ? .automatic : .count(threads))
        func decodeAll(_ counter: DecodedCounter) throws {
            let session = try DecoderSession(formatDescription: stream.format, configuration: configuration, outputHandler: counter.handler)
            for frame in stream.frames {
                try session.decode(avcc: frame.data, presentationTimeStamp: frame.presentationTimeStamp)
            }
            try session.waitForAsynchronousFrames()
            session.invalidate()
            // Every frame out, no more, in every timed run.
            try #require(counter.count == stream.frames.count, "frames out of the session: \(counter.count)")
        }
        // The same pictures first.
        let check = DecodedCounter(sumLuma: true)
        try decodeAll(check)
        let reference = runDecoderBaseline(stream, threads: threads, checksum: true)
        #expect(reference.frames == stream.frames.count)
        #expect(check.checksum == reference.checksum)

        let runs = EncoderBenchmarks.sessionVersusCRuns
        let times = try Bench.interleave(
            runs: runs,
            measure: { try decodeAll(DecodedCounter(sumLuma: false)) },
            baseline: {
                let frames = runDecoderBaseline(stream, threads: threads).frames
                try #require(frames == stream.frames.count, "frames out of the C loop: \(frames)")
            })
        let placement = "\(threads == 0 ? "libavcodec's automatic threads" : "1 thread"), every thread pinned to \(CPUPinning.label(cpus))"
        BenchmarkReport.shared.record(
            name, Bench.pairedRatio(times.measureCPUs, times.baselineCPUs), goal: "≤ 1.01",
            detail: String(format: "process CPU (CLOCK_PROCESS_CPUTIME_ID, every thread), median of the ratios of %d interleaved pairs of runs (medians: H264Decoder %.1f ms, C loop %.1f ms) for %d frames 1280x720 (",
                           runs, times.measureCPU * 1e3, times.baselineCPU * 1e3, stream.frames.count)
                + placement + "); run-to-run spread " + EncoderBenchmarks.spread(times.measureCPUs) + " vs " + EncoderBenchmarks.spread(times.baselineCPUs))
        BenchmarkReport.shared.record(
            name + "_wall", Bench.pairedRatio(times.measures, times.baselines), goal: "—",
            detail: String(format: "wall time of the same runs: H264Decoder %.1f ms, C loop %.1f ms (%.0f fps); run-to-run spread ",
                           times.measure * 1e3, times.baseline * 1e3, Double(stream.frames.count) / times.measure)
                + EncoderBenchmarks.spread(times.measures) + " vs " + EncoderBenchmarks.spread(times.baselines))
    }

    /// Access units given but not yet output as frames, after each is decoded, with
    /// `realTime` on an `ultraLowLatency` stream (the largest over the stream).
    @Test func realTimeDelayFrames() throws {
        let stream = try Stream720p.ultraLowLatency.get()
        let counter = DecodedCounter(sumLuma: false)
        let session = try DecoderSession(formatDescription: stream.format, configuration: DecoderConfiguration(realTime: true),
                                         outputHandler: counter.handler)
        var delay = 0
        for (index, frame) in stream.frames.enumerated() {
            try session.decode(avcc: frame.data, presentationTimeStamp: frame.presentationTimeStamp)
            try session.waitForQueuedAccessUnits(downTo: 0)
            delay = max(delay, index + 1 - counter.count)
        }
        try session.waitForAsynchronousFrames()
        session.invalidate()
        #expect(counter.count == stream.frames.count)
        BenchmarkReport.shared.record(
            "decoder_realtime_delay_frames", Double(delay), goal: "0",
            detail: "largest number of access units without their frame after decode + waitForQueuedAccessUnits, \(stream.frames.count) frames 1280x720 ultraLowLatency")
    }

    /// Heap allocations per decoded frame in steady state, all threads, DecoderSession minus
    /// the C loop's (libavcodec's own), counted by malloc-interposer in a child process.
    @Test func allocationsPerDecodedFrame() throws {
        if let resultPath = Bench.childResultPath {
            let (swift, c, frames) = try countAllocations()
            try "\(swift) \(c) \(frames)".write(toFile: resultPath, atomically: true, encoding: .utf8)
            return
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let library = executable.deletingLastPathComponent().appendingPathComponent("libMallocInterposerSwift.so")
        try #require(FileManager.default.fileExists(atPath: library.path), "no \(library.path)")
        let fields = try Bench.inChild("allocationsPerDecodedFrame", environment: ["LD_PRELOAD": library.path]).map { Int($0) }
        try #require(fields.count == 3)
        let (swift, c, frames) = (fields[0], fields[1], fields[2])
        BenchmarkReport.shared.record(
            "allocations_per_decoded_frame", Double(swift - c) / Double(frames), goal: "≤ 2",
            detail: "H264Decoder \(swift) − C loop \(c) allocations (libavcodec's own) over \(frames) frames (1 thread, 1280x720 veryfast)")
    }

    func countAllocations() throws -> (swift: Int, c: Int, frames: Int) {
        MallocInterposerSwift.initialize()
        let stream = try Stream720p.veryfast.get()
        let warmUp = 10
        let measured = stream.frames.count - warmUp
        let counter = DecodedCounter(sumLuma: false)
        let session = try DecoderSession(formatDescription: stream.format, configuration: DecoderConfiguration(threads: .count(1)),
                                         outputHandler: counter.handler)
        for frame in stream.frames.prefix(warmUp) { try session.decode(avcc: frame.data, presentationTimeStamp: frame.presentationTimeStamp) }
        try session.waitForQueuedAccessUnits(downTo: 0)
        MallocInterposerSwift.reset()
        MallocInterposerSwift.hook()
        for frame in stream.frames.dropFirst(warmUp) { try session.decode(avcc: frame.data, presentationTimeStamp: frame.presentationTimeStamp) }
        try session.waitForQueuedAccessUnits(downTo: 0)
        MallocInterposerSwift.unhook()
        let swift = MallocInterposerSwift.getStatistics().mallocCount
        try session.waitForAsynchronousFrames()
        session.invalidate()
        #expect(counter.count == stream.frames.count)

        func countC(_ count: Int) -> Int {
            var prefix = stream
            prefix.annexB = Array(stream.annexB.prefix(count))
            MallocInterposerSwift.reset()
            MallocInterposerSwift.hook()
            _ = runDecoderBaseline(prefix, threads: 1)
            MallocInterposerSwift.unhook()
            return MallocInterposerSwift.getStatistics().mallocCount
        }
        let c = countC(stream.frames.count) - countC(warmUp)
        return (swift, c, measured)
    }
}
}
