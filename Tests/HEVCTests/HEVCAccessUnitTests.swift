import Testing
import H264
import HEVC
import H264TestSupport

/// Access-unit cuts against FFmpeg's HEVC parser on the 12 shared streams, and the tolerant reading.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCAccessUnitTests {
    @Test(arguments: TestFixtures.hevcStreams)
    func accessUnitsMatchFFmpeg(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let expected = try ExpectedStream.loadHEVC(stream)
        let units = HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes)
        #expect(units.count == expected.accessUnits.count)
        // FFmpeg's HEVC parser cuts at the next access unit's `00 00 01`, leaving a 4-byte start
        // code's zero_byte with the access unit before; ours (as for H.264, and as Annex B
        // assigns it) begin at the zero_byte. So each of our cuts is compared one byte on when
        // a zero_byte stands there.
        func ffmpegCut(_ offset: Int) -> Int {
            offset + 3 < bytes.count && bytes[offset..<offset + 4] == [0, 0, 0, 1] && offset > 0 ? offset + 1 : offset
        }
        var ffmpegOffset = 0
        for (index, (unit, want)) in zip(units, expected.accessUnits).enumerated() {
            #expect(ffmpegCut(unit.streamOffset) == ffmpegOffset, "access unit \(index) of \(stream)")
            #expect(unit.nalUnitTypes.map { Int($0.rawValue) } == want.nalTypes, "access unit \(index) of \(stream)")
            ffmpegOffset += want.bytes
        }
        for (unit, next) in zip(units, units.dropFirst()) {
            #expect(unit.streamOffset + unit.byteCount == next.streamOffset)
        }
        #expect(units.reduce(0) { $0 + $1.byteCount } == bytes.count)
        #expect(units.first?.isIRAP == true)
        #expect(units.allSatisfy { $0.hasPicture })
    }

    /// The shared streaming reader feeding the assembler in random chunks gives exactly the
    /// whole-buffer access units; the stream's parameter sets end up in the cache, with no problem.
    @Test(arguments: TestFixtures.hevcStreams)
    func streamingEqualsWholeBuffer(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let whole = HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes)
        var assembler = HEVCAccessUnitAssembler()
        var units = nalUnitsInRandomChunks(bytes, maxChunk: 700, seed: UInt64(bytes.count)).compactMap { assembler.append($0) }
        if let last = assembler.finish(streamLength: bytes.count) { units.append(last) }
        #expect(units == whole)
        #expect(assembler.errorCount == 0 && assembler.warningCount == 0)
        #expect(assembler.parameterSets.sequenceParameterSets.count == 1)
        #expect(assembler.parameterSets.sequenceParameterSet(pictureParameterSetId: 0) != nil)
    }

    /// A unit with forbidden_zero_bit set and a slice segment with no payload are reported with
    /// their stream offset and skipped; a truncated SPS stays in its access unit but is not
    /// stored; the cuts around them are those of the undamaged stream.
    @Test func damagedUnitsAreReportedAndSkipped() throws {
        let bytes = try TestFixtures.data("hevc/tiny_16x16.265")
        let locations = AnnexB.nalUnits(in: bytes)
        var units = locations.map { Array(bytes[$0.range]) }
        let clean = units
        units.insert([0x80 | 0x02, 0x01, 0x55], at: 5) // forbidden_zero_bit, type 1
        units.insert([0x02, 0x01], at: 5) // TRAIL_R with nothing after the header
        units[1] = Array(units[1].prefix(6)) // the SPS cut short
        var assembler = HEVCAccessUnitAssembler()
        var cut: [[HEVCNALUnitType]] = []
        for (index, unit) in units.enumerated() {
            if let done = assembler.append(nalUnit: unit, streamOffset: index * 1000) { cut.append(done.nalUnitTypes) }
        }
        if let last = assembler.finish() { cut.append(last.nalUnitTypes) }
        var cleanStream = try AVCC.data(nalUnits: clean)
        try AnnexB.convertAVCCInPlace(&cleanStream)
        let cleanCuts = HEVCAccessUnitAssembler.accessUnits(inAnnexB: cleanStream).map(\.nalUnitTypes)
        #expect(cut == cleanCuts)
        #expect(assembler.errorCount == 3)
        #expect(assembler.recentErrors.map(\.code) == [.truncated, .truncated, .forbiddenZeroBit])
        #expect(assembler.recentErrors.map(\.byteOffset) == [1000, 5000, 6000])
        #expect(assembler.parameterSets.sequenceParameterSets.isEmpty)
    }
}

/// Units of layers above 0 ride along: never cut at, their parameter sets not stored.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCLayerTests {
    @Test func unitsOfLayer1NeitherCutNorStore() throws {
        let bytes = try TestFixtures.data("hevc/tiny_16x16.265")
        let units = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
        // Each unit again as layer 1 right after itself (nuh_layer_id 1: bit 3 of the second byte).
        var doubled: [[UInt8]] = []
        for unit in units { doubled += [unit, [unit[0], unit[1] | 0x08] + unit.dropFirst(2)] }
        var assembler = HEVCAccessUnitAssembler()
        var cut = doubled.enumerated().compactMap { assembler.append(nalUnit: $0.element, streamOffset: $0.offset) }
        if let last = assembler.finish() { cut.append(last) }
        #expect(cut.count == HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes).count)
        #expect(cut.allSatisfy { $0.nalUnitTypes.count % 2 == 0 })
        #expect(assembler.errorCount == 0)
        #expect(assembler.parameterSets.sequenceParameterSets.count == 1)
    }
}
