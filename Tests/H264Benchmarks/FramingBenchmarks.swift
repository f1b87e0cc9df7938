import Foundation
import H264
import H264TestSupport
import Testing

/// The conformance streams (`Fixtures/conformance`, 63 files, about 31 MB),
/// concatenated in name order, with their NAL units found by a naive byte-by-byte splitter.
final class ConformanceCorpus: Sendable {
    static let shared = ConformanceCorpus()

    /// The concatenated Annex-B streams.
    let annexB: [UInt8]
    /// Every NAL unit's range in `annexB`, from `ReferenceAnnexB`.
    let units: [Range<Int>]
    /// The NAL unit count FFmpeg's parser reports over all streams (`expected/*.json`).
    let ffmpegNALUnitCount: Int

    private init() {
        var bytes: [UInt8] = []
        var ffmpegCount = 0
        for name in TestFixtures.conformanceStreams {
            bytes += (try? TestFixtures.data("conformance/\(name)")) ?? []
            ffmpegCount += (try? ExpectedStream.load(name).nalTypes.count) ?? 0
        }
        annexB = bytes
        units = ReferenceAnnexB.nalUnits(bytes).map(\.range)
        ffmpegNALUnitCount = ffmpegCount
    }

    /// AVCC with 4-byte lengths, built here byte by byte from ``units``.
    func avcc() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(annexB.count + 4 * units.count)
        for range in units {
            let n = range.count
            out += [UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
                    UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
            out += annexB[range]
        }
        return out
    }

    /// ``avcc()`` with each length replaced by `00 00 00 01`, built here byte by byte.
    func fourByteAnnexB() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(annexB.count + 4 * units.count)
        for range in units {
            out += [0, 0, 0, 1]
            out += annexB[range]
        }
        return out
    }
}

/// A page-faulted destination for the `memcpy` baselines.
func faultedBuffer(_ count: Int) -> UnsafeMutableRawBufferPointer {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 64)
    memset(buffer.baseAddress!, 0x5A, buffer.count)
    return buffer
}

extension AllBenchmarks {
@Suite("Framing")
struct FramingBenchmarks {
    let corpus = ConformanceCorpus.shared

    /// `AnnexB.nalUnits(in:)` over the corpus ÷ `memcpy` of it: a throughput ratio (memcpy time
    /// ÷ scan time). The scan's own result array is included.
    @Test func scanVersusMemcpy() throws {
        let source = corpus.annexB
        #expect(source.count > 30_000_000)
        // Correct first: the scanner's units equal the naive splitter's, and their count is
        // FFmpeg's.
        let found = AnnexB.nalUnits(in: source)
        #expect(found.map(\.range) == corpus.units)
        #expect(found.count == corpus.ffmpegNALUnitCount)

        let destination = faultedBuffer(source.count)
        defer { destination.deallocate() }
        var sink = 0
        let times = try source.withUnsafeBytes { buffer in
            try Bench.interleave(
                measure: { sink &+= AnnexB.nalUnits(in: buffer).count },
                baseline: { memcpy(destination.baseAddress!, buffer.baseAddress!, buffer.count) })
        }
        #expect(sink == (Bench.runs + Bench.warmUpRuns) * found.count)
        BenchmarkReport.shared.record(
            "scan_vs_memcpy", times.baseline / times.measure, goal: "≥ 1.0",
            detail: String(format: "scan %.2f ms (%.2f GB/s), memcpy %.2f ms, %d MB, %d NAL units",
                           times.measure * 1e3, Double(source.count) / times.measure / 1e9,
                           times.baseline * 1e3, source.count >> 20, found.count))
    }

    /// `AnnexB.convertAVCCInPlace(_:)` on the corpus as AVCC ÷ `memcpy` of the same buffer (a
    /// throughput ratio). Before each timed conversion the length fields are written back
    /// (untimed), as an encoder would just have written them.
    @Test func avccToAnnexBInPlaceVersusMemcpy() throws {
        let avcc = corpus.avcc()
        let expected = corpus.fourByteAnnexB()
        // Where each length field is, and its bytes, to restore them between runs.
        var offsets: [Int] = []
        offsets.reserveCapacity(corpus.units.count)
        var position = 0
        for range in corpus.units {
            offsets.append(position)
            position += 4 + range.count
        }
        #expect(position == avcc.count)

        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: avcc.count, alignment: 64)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: avcc)
        let lengths = offsets.map { buffer.loadUnaligned(fromByteOffset: $0, as: UInt32.self) }
        func restore() {
            for (offset, length) in zip(offsets, lengths) {
                buffer.storeBytes(of: length, toByteOffset: offset, as: UInt32.self)
            }
        }
        try AnnexB.convertAVCCInPlace(buffer)
        #expect(Array(buffer) == expected)

        let destination = faultedBuffer(avcc.count)
        defer { destination.deallocate() }
        var failures = 0
        let times = try Bench.interleave(
            setUpMeasure: restore,
            measure: { do { try AnnexB.convertAVCCInPlace(buffer) } catch { failures += 1 } },
            baseline: { memcpy(destination.baseAddress!, buffer.baseAddress!, buffer.count) })
        #expect(failures == 0)
        #expect(Array(buffer) == expected)
        // The rewrite touches 4 bytes per NAL unit: its cost is per NAL unit (one dependent
        // load each, ~2.5 KB apart), memcpy's per byte. The ns per NAL unit says which limits it.
        let nanosecondsPerUnit = times.measure * 1e9 / Double(offsets.count)
        BenchmarkReport.shared.record(
            "avcc_to_annexb_inplace_vs_memcpy", times.baseline / times.measure, goal: "≥ 20",
            detail: String(format: "in place %.3f ms (%.1f ns per NAL unit), memcpy %.2f ms (%.2f GB/s), %d NAL units, %d MB",
                           times.measure * 1e3, nanosecondsPerUnit, times.baseline * 1e3,
                           Double(buffer.count) / times.baseline / 1e9, offsets.count, buffer.count >> 20))
        BenchmarkReport.shared.record(
            "avcc_to_annexb_inplace_ns_per_nal_unit", nanosecondsPerUnit, goal: "—",
            detail: String(format: "in-place rewrite time ÷ %d NAL units (memcpy of the same buffer: %.1f ns per NAL unit)",
                           offsets.count, times.baseline * 1e9 / Double(offsets.count)))
    }

    /// `AVCC.fromAnnexB(_:)` (4-byte lengths, parameter sets in band) on the corpus ÷ `memcpy`
    /// of the same buffer (a throughput ratio). The conversion allocates its output; the
    /// baseline copies into a buffer that is already there.
    ///
    /// Timed in a child process with one malloc arena (`MALLOC_ARENA_MAX=1`): only there do
    /// ``Bench/keepFreedMemory``'s settings hold for every thread. A test thread may otherwise
    /// allocate from a secondary arena, whose 39 MB output then needs a heap of its own that
    /// glibc unmaps as soon as it is empty, whatever the trim threshold: every run faulted its
    /// output in afresh (69 000 faults in the timed runs, ratio 0.2, when the scan benchmark
    /// happened to run first in the same process).
    @Test func annexBToAVCCVersusMemcpy() throws {
        let source = corpus.annexB
        let expected = corpus.avcc()
        let converted = try AVCC.fromAnnexB(source, lengthSize: 4, parameterSets: .inBand)
        #expect(converted.data == expected)
        if !Bench.isDebugBuild && Bench.childResultPath == nil {
            let figures = try Bench.inChild("annexBToAVCCVersusMemcpy", environment: ["MALLOC_ARENA_MAX": "1"])
            try #require(figures.count == 2)
            BenchmarkReport.shared.record(
                "annexb_to_avcc_vs_memcpy", figures[1] / figures[0], goal: "≥ 0.6",
                detail: String(format: "convert %.2f ms, memcpy %.2f ms (one malloc arena)", figures[0] * 1e3, figures[1] * 1e3))
            return
        }

        let destination = faultedBuffer(source.count)
        defer { destination.deallocate() }
        var bytes = 0
        var failures = 0
        let times = try Bench.interleave(
            measure: {
                do { bytes &+= try AVCC.fromAnnexB(source, lengthSize: 4, parameterSets: .inBand).data.count } catch { failures += 1 }
            },
            baseline: { source.withUnsafeBytes { _ = memcpy(destination.baseAddress!, $0.baseAddress!, $0.count) } })
        #expect(failures == 0)
        #expect(bytes == (Bench.runs + Bench.warmUpRuns) * expected.count)
        if let resultPath = Bench.childResultPath {
            try "\(times.measure) \(times.baseline)".write(toFile: resultPath, atomically: true, encoding: .utf8)
            return
        }
        BenchmarkReport.shared.record(
            "annexb_to_avcc_vs_memcpy", times.baseline / times.measure, goal: "≥ 0.6",
            detail: String(format: "convert %.2f ms, memcpy %.2f ms", times.measure * 1e3, times.baseline * 1e3))
    }
}
}
