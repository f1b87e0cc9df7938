import H264
import H264TestSupport
import Testing

/// Streams that go wrong part way: whatever was accepted before the damage is kept, the reader
/// resynchronises at the next start code, and the damage is reported. Streams are built from the
/// hand-made SPS/PPS/slices of `SyntheticStream` (clause 7.3 syntax) with Annex-B start codes.
@Suite(.ownThread) struct MalformedStreamTests {
    static let good: [[UInt8]] = [
        SyntheticStream.sps(), SyntheticStream.pps(),
        SyntheticStream.slice(idr: true),
        SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
        SyntheticStream.slice(idr: false, frameNum: 2, pocLsb: 4),
    ]

    static func annexB(_ units: [[UInt8]]) -> [UInt8] { units.flatMap { AnnexB.fourByteStartCode + $0 } }

    /// Feeds `bytes` to a streaming reader in chunks of `chunk` bytes and assembles access units.
    static func read(_ bytes: [UInt8], chunk: Int) -> (units: [StreamNALUnit], skipped: Int, accessUnits: [AccessUnit], errors: [MediaError]) {
        var reader = AnnexBStreamReader()
        var units: [StreamNALUnit] = []
        var start = 0
        while start < bytes.count {
            reader.append(bytes[start..<min(bytes.count, start + chunk)])
            units += reader.nalUnits()
            start += chunk
        }
        units += reader.finish()
        var assembler = AccessUnitAssembler()
        var accessUnits = units.compactMap { assembler.append(nalUnit: $0.bytes, streamOffset: $0.streamOffset) }
        if let last = assembler.finish(streamLength: bytes.count) { accessUnits.append(last) }
        return (units, reader.skippedByteCount, accessUnits, assembler.recentErrors)
    }

    @Test(arguments: [1, 3, 7, 4096])
    func garbageBeforeTheFirstStartCodeIsSkippedAndCounted(chunk: Int) {
        // Bytes of a TS packet header and payload that never contain 00 00 01.
        let garbage: [UInt8] = [0x47, 0x40, 0x11, 0x10, 0x00, 0xFF, 0x00, 0x02, 0xB0]
        let result = Self.read(garbage + Self.annexB(Self.good), chunk: chunk)
        #expect(result.skipped == garbage.count)
        #expect(result.units.map(\.bytes) == Self.good)
        #expect(result.accessUnits.count == 3)
        #expect(result.errors.isEmpty)
    }

    @Test(arguments: [1, 5, 4096])
    func garbageBetweenStartCodesIsDroppedAndReported(chunk: Int) {
        // A burst of 0xFF (forbidden_zero_bit set) where the second picture should begin.
        let garbage = [UInt8](repeating: 0xFF, count: 40)
        let units = Array(Self.good[0..<3]) + [garbage] + Array(Self.good[3...])
        let bytes = Self.annexB(units)
        let result = Self.read(bytes, chunk: chunk)
        // The reader hands out everything between start codes, garbage included …
        #expect(result.units.map(\.bytes) == units)
        // … the assembler drops the garbage, says where it was, and keeps every real unit.
        #expect(result.errors.map(\.code) == [.forbiddenZeroBit])
        let garbageOffset = Self.annexB(Array(Self.good[0..<3])).count
        #expect(result.errors.first?.byteOffset == garbageOffset)
        #expect(result.accessUnits.flatMap { $0.nalUnits.map(Array.init) } == Self.good)
        #expect(result.accessUnits.map(\.byteCount).reduce(0, +) == bytes.count)
        #expect(result.accessUnits.map(\.nalUnitTypes.count) == [3, 1, 1])
    }

    @Test func aStreamCutInsideANALUnitKeepsEverythingBefore() {
        let bytes = Self.annexB(Self.good)
        let cut = Array(bytes.dropLast(3))
        let result = Self.read(cut, chunk: 16)
        #expect(Array(result.units.map(\.bytes).dropLast()) == Array(Self.good.dropLast()))
        #expect(result.units.last?.bytes == Array(Self.good.last!.dropLast(3)))
    }

    @Test(arguments: [[0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0, 0, 1, 0, 0]] as [[UInt8]])
    func aStartCodeAtTheVeryEndAddsNoEmptyUnit(tail: [UInt8]) {
        let result = Self.read(Self.annexB(Self.good) + tail, chunk: 2)
        #expect(result.units.map(\.bytes) == Self.good)
        #expect(AnnexB.nalUnits(in: Self.annexB(Self.good) + tail).count == Self.good.count)
    }

    @Test func aDamagedParameterSetIsReportedAndLaterPicturesStillAssemble() {
        var badSPS = SyntheticStream.sps(id: 1)
        badSPS.removeLast() // drops the trailing bits: the SPS no longer parses
        let units = Self.good + [badSPS, SyntheticStream.slice(idr: false, frameNum: 3, pocLsb: 6)]
        let result = Self.read(Self.annexB(units), chunk: 64)
        #expect(result.errors.map(\.code) == [.truncated])
        #expect(result.accessUnits.flatMap { $0.nalUnits.map(Array.init) } == units)
    }
}
