import Foundation
import Testing
import H264
import H264TestSupport

/// Access-unit cuts against FFmpeg's parser on every conformance stream.
@Suite(.ownThread) struct AccessUnitConformanceTests {
    static func assemble(_ bytes: [UInt8]) -> [AccessUnit] {
        AccessUnitAssembler.accessUnits(inAnnexB: bytes)
    }

    /// The streaming reader feeding the assembler in random chunks gives exactly the whole-buffer
    /// access units (data, offsets, sizes, formats).
    @Test(arguments: TestFixtures.conformanceStreams)
    func streamingAccessUnitsEqualWholeBuffer(stream: String) throws {
        let bytes = try TestFixtures.data("conformance/\(stream)")
        let whole = Self.assemble(bytes)
        for seed in UInt64(1)...3 {
            var assembler = AccessUnitAssembler()
            let nalUnits = nalUnitsInRandomChunks(bytes, maxChunk: seed == 1 ? 64 : 70_000, seed: seed &* 7919 &+ UInt64(bytes.count))
            var units = nalUnits.compactMap { assembler.append($0) }
            if let last = assembler.finish(streamLength: bytes.count) { units.append(last) }
            #expect(units == whole, "seed \(seed)")
        }
    }

    @Test(arguments: TestFixtures.conformanceStreams)
    func accessUnitsMatchFFmpeg(stream: String) throws {
        let bytes = try TestFixtures.data("conformance/\(stream)")
        let expected = try ExpectedStream.load(stream)
        let units = Self.assemble(bytes)
        #expect(units.count == expected.accessUnits.count)
        var offset = 0
        for (index, (unit, want)) in zip(units, expected.accessUnits).enumerated() {
            #expect(unit.streamOffset == offset, "access unit \(index)")
            #expect(unit.byteCount == want.bytes, "access unit \(index) of \(stream)")
            #expect(unit.nalUnitTypes.map { Int($0.rawValue) } == want.nalTypes, "access unit \(index) of \(stream)")
            offset += unit.byteCount
            if unit.byteCount != want.bytes { break }
        }
        #expect(units.reduce(0) { $0 + $1.byteCount } == bytes.count)
    }
}
