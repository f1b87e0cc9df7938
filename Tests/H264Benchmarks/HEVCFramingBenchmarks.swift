import Foundation
import H264
import H264TestSupport
import Testing

extension AllBenchmarks {
/// The start-code scan over H.265: the same `AnnexB.nalUnits(in:)` as over H.264 (the scan is
/// codec-neutral), so its ratio should equal `scan_vs_memcpy`'s.
@Suite("HEVCFraming")
struct HEVCFramingBenchmarks {
    /// The 12 shared H.265 streams (about 0.3 MB) concatenated in name order, repeated to about
    /// the size of the H.264 corpus (31 MB) so that both scans run over the same amount of data.
    static func corpus() throws -> (bytes: [UInt8], nalUnitsPerPass: Int, passes: Int) {
        var pass: [UInt8] = []
        var count = 0
        for name in TestFixtures.hevcStreams {
            pass += try TestFixtures.data("hevc/\(name)")
            count += try ExpectedStream.loadHEVC(name).nalTypes.count
        }
        let passes = max(1, 31_000_000 / max(pass.count, 1))
        return (Array(repeating: pass, count: passes).flatMap { $0 }, count, passes)
    }

    /// `AnnexB.nalUnits(in:)` over the H.265 corpus ÷ `memcpy` of it (memcpy time ÷ scan time).
    @Test func hevcScanVersusMemcpy() throws {
        let (source, perPass, passes) = try Self.corpus()
        #expect(source.count > 30_000_000)
        // Correct first: the scanner's units equal the naive splitter's, and their count is
        // FFmpeg's (its NAL unit types per access unit, in expected/*.json).
        let found = AnnexB.nalUnits(in: source)
        #expect(found.map(\.range) == ReferenceAnnexB.nalUnits(source).map(\.range))
        #expect(found.count == perPass * passes)

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
            "hevc_scan_vs_memcpy", times.baseline / times.measure, goal: "= scan_vs_memcpy",
            detail: String(format: "scan %.2f ms (%.2f GB/s), memcpy %.2f ms, %d MB, %d NAL units (12 streams × %d)",
                           times.measure * 1e3, Double(source.count) / times.measure / 1e9,
                           times.baseline * 1e3, source.count >> 20, found.count, passes))
    }
}
}
