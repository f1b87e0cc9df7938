import H264
import H264TestSupport
import Testing

/// A conformance stream damaged in the middle is read around the damage: the damaged NAL unit is
/// reported with its exact code, field and offset and skipped, and every other access unit is
/// the one FFmpeg reads in the undamaged stream (Fixtures/expected). The stream is BA_MW_D.264,
/// 100 access units of one slice each after the first.
@Suite(.ownThread) struct DamagedStreamTests {
    static let stream = "BA_MW_D.264"
    static let damagedIndex = 50

    enum Damage: String, CaseIterable, Sendable {
        /// The slice's header byte gets forbidden_zero_bit set (a bit error on the wire).
        case forbiddenZeroBit
        /// The slice is cut right after its header byte (a recording cut and spliced).
        case cutAfterHeader
    }

    /// The damaged stream, the offset of the damaged unit's start code and of its header byte,
    /// and how many bytes were cut.
    static func damaged(_ damage: Damage) throws -> (bytes: [UInt8], startCode: Int, header: Int, removed: Int, want: ExpectedStream) {
        var bytes = try TestFixtures.data("conformance/\(stream)")
        let want = try ExpectedStream.load(stream)
        let start = want.accessUnits[..<damagedIndex].reduce(0) { $0 + $1.bytes }
        let location = try #require(AnnexB.nalUnits(in: bytes).first { $0.startCodeOffset == start })
        switch damage {
        case .forbiddenZeroBit:
            bytes[location.range.lowerBound] |= 0x80
            return (bytes, start, location.range.lowerBound, 0, want)
        case .cutAfterHeader:
            let end = start + want.accessUnits[damagedIndex].bytes
            bytes.removeSubrange(location.range.lowerBound + 1..<end)
            return (bytes, start, location.range.lowerBound, end - location.range.lowerBound - 1, want)
        }
    }

    @Test(arguments: Damage.allCases)
    func readAroundTheDamagedUnit(_ damage: Damage) throws {
        let (bytes, start, _, removed, want) = try Self.damaged(damage)
        var assembler = AccessUnitAssembler()
        var units: [AccessUnit] = []
        for location in AnnexB.nalUnits(in: bytes) {
            if let unit = assembler.append(nalUnit: bytes[location.range], streamOffset: location.startCodeOffset) { units.append(unit) }
        }
        if let last = assembler.finish(streamLength: bytes.count) { units.append(last) }

        // Exactly one problem: the damaged unit, at its start code.
        let expected: MediaError = switch damage {
        case .forbiddenZeroBit:
            MediaError(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: start,
                      "a \(want.accessUnits[Self.damagedIndex].bytes - 4)-byte unit with forbidden_zero_bit set was dropped")
        case .cutAfterHeader:
            MediaError(.truncated, field: "first_mb_in_slice", byteOffset: start, bitOffset: 0, "Exp-Golomb code runs past the end")
        }
        #expect(assembler.recentErrors == [expected])
        #expect(assembler.warningCount == 0)

        // Every other access unit as FFmpeg reads the whole stream; the damaged one's bytes go
        // to the access unit before it, so the access units still partition the stream.
        var wantUnits = want.accessUnits
        let lost = wantUnits.remove(at: Self.damagedIndex)
        wantUnits[Self.damagedIndex - 1].bytes += lost.bytes - removed
        #expect(units.map(\.nalUnitTypes).map { $0.map { Int($0.rawValue) } } == wantUnits.map(\.nalTypes))
        #expect(units.map(\.byteCount) == wantUnits.map(\.bytes))
        #expect(units.reduce(0) { $0 + $1.byteCount } == bytes.count)
        // The units after the damage keep their formats.
        #expect(units.allSatisfy { $0.formatDescription != nil })
    }

    /// A recording cut off inside its last slice: every access unit before it is FFmpeg's, the
    /// last keeps what arrived, and nothing is reported (a cut slice still has its header).
    @Test func aRecordingCutInsideItsLastSliceKeepsEverythingBefore() throws {
        let whole = try TestFixtures.data("conformance/\(Self.stream)")
        let want = try ExpectedStream.load(Self.stream)
        let cut = want.accessUnits.last!.bytes / 2
        let bytes = Array(whole.dropLast(cut))
        let units = AccessUnitAssembler.accessUnits(inAnnexB: bytes)
        #expect(Array(units.dropLast().map(\.byteCount)) == Array(want.accessUnits.dropLast().map(\.bytes)))
        #expect(units.map { $0.nalUnitTypes.map { Int($0.rawValue) } } == want.accessUnits.map(\.nalTypes))
        #expect(units.last?.byteCount == want.accessUnits.last!.bytes - cut)
    }

    /// The live receiver reads the damaged stream the same way, chunked or not, and keeps decoding.
    @Test(arguments: Damage.allCases, [1 << 20, 100])
    func receiverKeepsDecodingPastTheDamage(_ damage: Damage, chunk: Int) throws {
        let (bytes, _, _, _, want) = try Self.damaged(damage)
        var receiver = AccessUnitReceiver()
        var delivered = 0
        var start = 0
        var events: [AccessUnitReceiver.Event] = []
        while start < bytes.count {
            events += receiver.receive(bytes[start..<min(bytes.count, start + chunk)])
            start += chunk
        }
        events += receiver.finish()
        for event in events {
            if case .accessUnit = event { delivered += 1 } else { Issue.record("unexpected \(event)") }
        }
        #expect(delivered == want.accessUnits.count - 1)
        #expect(receiver.assemblerErrorCount == 1)
    }
}

/// The Annex-B → AVCC conversion carries a parameter set whose id cannot be read over as it is
/// and says so, keeping everything else.
@Suite(.ownThread) struct DamagedConversionTests {
    @Test func aDamagedParameterSetIsKeptAndReported() throws {
        let cut: [UInt8] = [0x68] // a PPS cut right after its header byte
        let units = [SyntheticStream.sps(), SyntheticStream.pps(), SyntheticStream.slice(idr: true), cut,
                     SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2)]
        let bytes = units.flatMap { AnnexB.fourByteStartCode + $0 }
        let result = try AVCC.fromAnnexB(bytes, parameterSets: .configuration)
        let cutOffset = units[..<3].reduce(0) { $0 + 4 + $1.count } + 4
        #expect(result.diagnostics == [MediaError(.truncated, field: "pic_parameter_set_id", byteOffset: cutOffset,
                                                 "a 1-byte parameter set ends before its id")])
        #expect(try AVCC.nalUnits(in: result.data, lengthSize: 4).map { Array(result.data[$0]) } == [units[2], cut, units[4]])
        #expect(result.pictureParameterSets == [units[1]])
    }
}
