import Testing
@testable import H264
import H264TestSupport
import MediaCore

@Suite(.ownThread) struct StreamReaderTests {
    /// Whole-buffer parsing mapped to stream units: what every chunking must give.
    static func expected(_ bytes: [UInt8]) -> [StreamNALUnit] {
        AnnexB.nalUnits(in: bytes).map { StreamNALUnit(bytes: Array(bytes[$0.range]), streamOffset: $0.startCodeOffset) }
    }

    /// Feeds `bytes` in chunks of the given sizes, draining complete units after each chunk.
    static func read(_ bytes: [UInt8], chunkSizes: some Sequence<Int>) -> (units: [StreamNALUnit], skipped: Int) {
        var reader = AnnexBStreamReader()
        var units: [StreamNALUnit] = []
        var position = 0
        var sizes = chunkSizes.makeIterator()
        while position < bytes.count {
            let size = min(max(sizes.next() ?? bytes.count, 1), bytes.count - position)
            reader.append(bytes[position..<position + size])
            position += size
            units += reader.nalUnits()
        }
        units += reader.finish()
        return (units, reader.skippedByteCount)
    }

    /// Random chunk sizes: mostly tiny (1–4 bytes), sometimes up to 64 KiB.
    static func randomSizes(seed: UInt64) -> some Sequence<Int> {
        var rng = SplitMix64(seed: seed)
        return AnyIterator { () -> Int? in
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: Int.random(in: 1...4, using: &rng)
            case 1: Int.random(in: 1...64, using: &rng)
            case 2: Int.random(in: 1...4096, using: &rng)
            default: Int.random(in: 1...65536, using: &rng)
            }
        }.lazy
    }

    /// The hand-made vectors of the Annex-B tests, split at every pair of points.
    @Test(arguments: FramingAnnexBTests.cases)
    func everySplitOfHandMadeVectors(_ testCase: FramingAnnexBTests.Case) {
        let bytes = testCase.bytes
        let expected = Self.expected(bytes)
        #expect(expected.map(\.streamOffset) == testCase.expected.map(\.startCodeOffset))
        #expect(Self.read(bytes, chunkSizes: repeatElement(1, count: bytes.count)).units == expected)
        for first in 0...bytes.count {
            for second in first...bytes.count {
                var reader = AnnexBStreamReader()
                var units: [StreamNALUnit] = []
                for range in [0..<first, first..<second, second..<bytes.count] {
                    reader.append(bytes[range])
                    units += reader.nalUnits()
                }
                units += reader.finish()
                #expect(units == expected, "split at \(first), \(second)")
            }
        }
    }

    @Test func countsGarbageBeforeFirstStartCode() {
        // 5 garbage bytes, then a 4-byte start code: the zero_byte belongs to the start code.
        let bytes: [UInt8] = [0x47, 0x40, 0x11, 0x10, 0xFF, 0, 0, 0, 1, 0x09, 0x10]
        for size in 1...bytes.count {
            let (units, skipped) = Self.read(bytes, chunkSizes: repeatElement(size, count: bytes.count))
            #expect(skipped == 5)
            #expect(units == [StreamNALUnit(bytes: [0x09, 0x10], streamOffset: 5)])
        }
        let (units, skipped) = Self.read([1, 2, 3, 4, 0, 0], chunkSizes: [2, 2, 2])
        #expect(units.isEmpty)
        #expect(skipped == 6)
    }

    @Test func handsOutUnitsAsSoonAsTheNextStartCodeArrives() {
        var reader = AnnexBStreamReader()
        reader.append([0, 0, 0, 1, 0x09, 0x10, 0, 0] as [UInt8])
        #expect(reader.next() == nil) // 00 00 might be the start of a start code
        reader.append([0] as [UInt8])
        #expect(reader.next() == nil)
        reader.append([1, 0x67] as [UInt8])
        #expect(reader.next() == StreamNALUnit(bytes: [0x09, 0x10], streamOffset: 0))
        #expect(reader.next() == nil)
        let rest = reader.finish()
        #expect(rest == [StreamNALUnit(bytes: [0x67], streamOffset: 6)])
        #expect(rest.first?.nalUnitType == .sequenceParameterSet)
        #expect(rest.first?.nalRefIdc == 3)
    }

    @Test func finishResetsForANewStream() {
        var reader = AnnexBStreamReader()
        reader.append([0, 0, 1, 0x09, 0x10] as [UInt8])
        #expect(reader.finish().count == 1)
        reader.append([0, 0, 1, 0x68, 0xCE] as [UInt8])
        #expect(reader.finish() == [StreamNALUnit(bytes: [0x68, 0xCE], streamOffset: 0)])
        #expect(reader.finish().isEmpty)
    }

    @Test func acceptsRawBuffers() {
        let bytes: [UInt8] = [0, 0, 0, 1, 0x09, 0x10, 0, 0, 1, 0x41, 0x9A]
        var reader = AnnexBStreamReader()
        bytes.withUnsafeBytes { reader.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<7])) }
        bytes.withUnsafeBytes { reader.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[7...])) }
        #expect(reader.nalUnits() + reader.finish() == Self.expected(bytes))
    }

    /// Every conformance stream, random chunkings from many seeds: exactly whole-buffer parsing.
    @Test(arguments: TestFixtures.conformanceStreams)
    func randomChunksOfConformanceStreams(_ name: String) throws {
        let bytes = try TestFixtures.data("conformance/\(name)")
        let expected = Self.expected(bytes)
        for seed in 0..<4 as Range<UInt64> {
            let (units, skipped) = Self.read(bytes, chunkSizes: Self.randomSizes(seed: seed &+ UInt64(bytes.count)))
            #expect(units == expected, "seed \(seed)")
            #expect(skipped == (expected.first?.streamOffset ?? bytes.count))
        }
        // 1-byte chunks over the first 24 KiB (a valid stream prefix on its own).
        let prefix = Array(bytes.prefix(24 * 1024))
        #expect(Self.read(prefix, chunkSizes: repeatElement(1, count: prefix.count)).units == Self.expected(prefix))
    }

    /// Memory stays bounded by the largest NAL unit plus a chunk.
    @Test
    func memoryIsBoundedByTheLargestUnit() throws {
        let bytes = try TestFixtures.data("conformance/HPCAFL_BRCM_C.264")
        let largest = AnnexB.nalUnits(in: bytes).map(\.range.count).max() ?? 0
        let chunk = 4096
        var reader = AnnexBStreamReader()
        var most = 0
        var position = 0
        while position < bytes.count {
            let end = min(position + chunk, bytes.count)
            reader.append(bytes[position..<end])
            position = end
            most = max(most, reader.bufferedByteCount)
            _ = reader.nalUnits()
        }
        #expect(largest < bytes.count / 4) // the stream has many units, so the bound means something
        #expect(most <= largest + chunk + 8)
    }
}
