import Testing
@testable import H264
import H264TestSupport
import MediaCore
import H264

@Suite(.ownThread) struct FramingConversionTests {
    // Made-up but well-formed-looking units: SPS 67 42 00 1E AB, PPS 68 CE 38 80,
    // IDR slice 65 88 84, non-IDR slice 41 9A 02, AUD 09 F0.
    static let sps: [UInt8] = [0x67, 0x42, 0x00, 0x1E, 0xAB]
    static let pps: [UInt8] = [0x68, 0xCE, 0x38, 0x80]
    static let idr: [UInt8] = [0x65, 0x88, 0x84]
    static let slice: [UInt8] = [0x41, 0x9A, 0x02]
    static let aud: [UInt8] = [0x09, 0xF0]
    static let four: [UInt8] = [0, 0, 0, 1]
    static let three: [UInt8] = [0, 0, 1]

    static func record() throws -> AVCDecoderConfigurationRecord {
        try AVCDecoderConfigurationRecord(sequenceParameterSets: [sps], pictureParameterSets: [pps])
    }

    @Test func insertsParameterSetsBeforeIDR() throws {
        let sample = try AVCC.data(nalUnits: [Self.aud, Self.idr])
        let annexB = try AnnexB.fromAVCC(sample, lengthSize: 4, parameterSets: Self.record())
        // AUD first (4-byte), SPS and PPS (4-byte), then the IDR slice (3-byte), as h264_mp4toannexb.
        #expect(annexB == Self.four + Self.aud + Self.four + Self.sps + Self.four + Self.pps + Self.three + Self.idr)
    }

    @Test func keepsInBandParameterSets() throws {
        let sample = try AVCC.data(nalUnits: [Self.sps, Self.pps, Self.idr, Self.idr])
        let annexB = try AnnexB.fromAVCC(sample, lengthSize: 4, parameterSets: Self.record())
        #expect(annexB == Self.four + Self.sps + Self.four + Self.pps + Self.three + Self.idr + Self.three + Self.idr)
    }

    @Test func insertsOnlyTheMissingPPS() throws {
        let sample = try AVCC.data(nalUnits: [Self.sps, Self.idr])
        let annexB = try AnnexB.fromAVCC(sample, lengthSize: 4, parameterSets: Self.record())
        #expect(annexB == Self.four + Self.sps + Self.four + Self.pps + Self.three + Self.idr)
    }

    @Test func insertsNothingBeforeNonIDRSlices() throws {
        let sample = try AVCC.data(nalUnits: [Self.slice, Self.slice], lengthSize: 2)
        let annexB = try AnnexB.fromAVCC(sample, lengthSize: 2, parameterSets: Self.record())
        #expect(annexB == Self.four + Self.slice + Self.three + Self.slice)
        let fourByte = try AnnexB.fromAVCC(sample, lengthSize: 2, parameterSets: Self.record(), startCodes: .fourByte)
        #expect(fourByte == Self.four + Self.slice + Self.four + Self.slice)
    }

    @Test func readsAnnexBSamplesAsTheirAVCCTwins() throws {
        // Already Annex-B: as 4-byte AVCC, the second "length" F0 00 00 01 runs past the end.
        // It converts as the same access unit in AVCC does (parameter sets inserted alike).
        let sample = Self.four + Self.aud + Self.three + Self.idr
        let twin = try AVCC.data(nalUnits: [Self.aud, Self.idr], lengthSize: 4)
        #expect(try AnnexB.fromAVCC(sample, lengthSize: 4, parameterSets: Self.record())
                == AnnexB.fromAVCC(twin, lengthSize: 4, parameterSets: Self.record()))
        // As 2-byte AVCC the first length is 0.
        #expect(try AnnexB.fromAVCC(sample, lengthSize: 2) == Self.four + Self.aud + Self.three + Self.idr)
        var inPlace = sample
        try AnnexB.convertAVCCInPlace(&inPlace)
        #expect(inPlace == sample)
    }

    @Test func convertsAVCCThatLooksLikeAStartCode() throws {
        // A genuine AVCC sample whose first NAL unit is a 1-byte end of sequence (0B): its length
        // field reads 00 00 00 01, yet the data parses as AVCC and is converted.
        let sample: [UInt8] = [0, 0, 0, 1, 0x0B, 0, 0, 0, 2, 0x09, 0xF0]
        #expect(try AnnexB.fromAVCC(sample, lengthSize: 4) == Self.four + [0x0B] + Self.three + Self.aud)
    }

    @Test func malformedAVCCThatIsNotAnnexBThrows() {
        do { _ = try AnnexB.fromAVCC([0, 0, 0, 9, 0x41], lengthSize: 4); Issue.record("no error") } catch {
            #expect(error.code == .lengthPastEnd)
            #expect(error.byteOffset == 0)
        }
        do { _ = try AnnexB.fromAVCC(Self.four + Self.aud, lengthSize: 3); Issue.record("no error") } catch {
            #expect(error.code == .invalidLengthSize)
        }
    }

    @Test func inPlaceStopsAtTheBadLength() {
        var bytes: [UInt8] = [0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0, 9, 0x41]
        do { try AnnexB.convertAVCCInPlace(&bytes); Issue.record("no error") } catch {
            #expect(error.code == .lengthPastEnd)
            #expect(error.byteOffset == 6)
        }
        // The unit before the bad length is converted (2 → start code), the rest untouched.
        #expect(bytes == [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 9, 0x41])
        var empty: [UInt8] = []
        try? AnnexB.convertAVCCInPlace(&empty)
        #expect(empty.isEmpty)
        var zero: [UInt8] = [0, 0, 0, 0]
        do { try AnnexB.convertAVCCInPlace(&zero); Issue.record("no error") } catch {
            #expect(error.code == .emptyNALUnit)
        }
    }

    @Test func annexBToAVCCRejectsUnitsTooLongForTheLengthSize() throws {
        let bytes = Self.four + [0x65] + [UInt8](repeating: 0x88, count: 299)
        do { _ = try AVCC.fromAnnexB(bytes, lengthSize: 1); Issue.record("no error") } catch {
            #expect(error.code == .valueOutOfRange)
            #expect(error.byteOffset == 4)
        }
        #expect(try AVCC.fromAnnexB(bytes, lengthSize: 2).data.count == 302)
    }

    @Test func annexBToAVCCRejectsGarbage() {
        do { _ = try AVCC.fromAnnexB([0x47, 0x40] + Self.four + Self.aud); Issue.record("no error") } catch {
            #expect(error.code == .missingStartCode)
        }
    }

    @Test func annexBToAVCCMovesParameterSetsOut() throws {
        let annexB = Self.four + Self.sps + Self.four + Self.pps + Self.three + Self.idr + Self.four + Self.sps + Self.three + Self.slice
        let inBand = try AVCC.fromAnnexB(annexB)
        #expect(try inBand.data == AVCC.data(nalUnits: [Self.sps, Self.pps, Self.idr, Self.sps, Self.slice]))
        let moved = try AVCC.fromAnnexB(annexB, lengthSize: 2, parameterSets: .configuration)
        #expect(try moved.data == AVCC.data(nalUnits: [Self.idr, Self.slice], lengthSize: 2))
        #expect(moved.sequenceParameterSets == [Self.sps])
        #expect(moved.pictureParameterSets == [Self.pps])
        #expect(inBand.sequenceParameterSets == [Self.sps])
        let record = try moved.configurationRecord()
        #expect(record.nalUnitLengthSize == 2)
        #expect(record.avcProfileIndication == 0x42)
    }

    @Test func extradataInEitherForm() throws {
        let record = try Self.record()
        let fromAVCC = try AVCDecoderConfigurationRecord(extradata: record.serialized())
        let fromAnnexB = try AVCDecoderConfigurationRecord(extradata: Self.four + Self.sps + Self.three + Self.pps)
        #expect(fromAVCC == record)
        #expect(fromAnnexB == record)
        for bad: [UInt8] in [[0x02, 0x42, 0x00], [0, 0, 0]] {
            do { _ = try AVCDecoderConfigurationRecord(extradata: bad); Issue.record("no error for \(bad)") } catch {
                #expect(error.code == .missingStartCode)
            }
        }
        do { _ = try AVCDecoderConfigurationRecord(extradata: Self.four + Self.pps); Issue.record("no error") } catch {
            #expect(error.code == .missingParameterSet)
        }
        do { _ = try AVCDecoderConfigurationRecord(extradata: []); Issue.record("no error") } catch {
            #expect(error.code == .truncated)
        }
    }

    /// The mp4ff fixture (raw AVCC stream, 4-byte lengths) converts to Annex-B holding the
    /// same NAL units; AUDs open its two access units, so both get 4-byte start codes.
    /// (Checked once by hand: ffprobe 5.1 reads both the copied and the in-place output as a
    /// Main-profile 704x396 stream of 2 frames, and ffmpeg decodes them without error.)
    @Test
    func convertsTheAVCCFixture() throws {
        let avcc = try TestFixtures.data("avcc/mp4ff_two_frames_avcc_len4.264")
        let ranges = try AVCC.nalUnits(in: avcc, lengthSize: 4)
        let annexB = try AnnexB.fromAVCCStream(avcc, lengthSize: 4)
        let units = AnnexB.nalUnits(in: annexB)
        #expect(units.map { Array(annexB[$0.range]) } == ranges.map { Array(avcc[$0]) })
        // AUD, SPS, PPS, IDR, AUD, slice: 4-byte for AU starts and parameter sets.
        #expect(units.map(\.startCodeLength) == [4, 4, 4, 3, 4, 3])
        var inPlace = avcc
        try AnnexB.convertAVCCInPlace(&inPlace)
        #expect(inPlace == (try AnnexB.fromAVCCStream(avcc, lengthSize: 4, startCodes: .fourByte)))
        // Every NAL unit's bytes unchanged; same size as the input.
        #expect(inPlace.count == avcc.count)
        #expect(AnnexB.nalUnits(in: inPlace).map { Array(inPlace[$0.range]) } == ranges.map { Array(avcc[$0]) })
    }

    /// Annex-B → AVCC → Annex-B keeps every NAL unit of every conformance stream, byte for byte,
    /// with 4- and 2-byte lengths (2 where every unit fits, otherwise the error); the in-place
    /// conversion equals the copying one.
    @Test(arguments: TestFixtures.conformanceStreams)
    func roundTripsConformanceStreams(_ name: String) throws {
        let bytes = try TestFixtures.data("conformance/\(name)")
        let original = nalUnitBytes(bytes)
        let longest = original.map(\.count).max() ?? 0

        let avcc4 = try AVCC.fromAnnexB(bytes, lengthSize: 4)
        #expect(avcc4.data.count == original.reduce(0) { $0 + 4 + $1.count })
        #expect(try AVCC.nalUnits(in: avcc4.data, lengthSize: 4).map { Array(avcc4.data[$0]) } == original)
        let back = try AnnexB.fromAVCCStream(avcc4.data, lengthSize: 4)
        #expect(nalUnitBytes(back) == original)

        var inPlace = avcc4.data
        try AnnexB.convertAVCCInPlace(&inPlace)
        #expect(inPlace == (try AnnexB.fromAVCCStream(avcc4.data, lengthSize: 4, startCodes: .fourByte)))

        if longest <= 0xFFFF {
            let avcc2 = try AVCC.fromAnnexB(bytes, lengthSize: 2)
            #expect(nalUnitBytes(try AnnexB.fromAVCCStream(avcc2.data, lengthSize: 2)) == original)
        } else {
            #expect(throws: MediaError.self) { try AVCC.fromAnnexB(bytes, lengthSize: 2) }
        }

        // Parameter sets moved out: the data holds everything else, in order, plus the in-stream
        // updates — parameter sets whose id was first used with other content (reference model:
        // first of each (type, id) moves out, identical repeats are dropped, updates stay).
        let moved = try AVCC.fromAnnexB(bytes, parameterSets: .configuration)
        var firstOfId: [Int: [UInt8]] = [:]
        let others = original.filter { nal in
            let type = Int(nal[0] & 0x1F)
            guard [7, 8, 13].contains(type) else { return true }
            var reader = BitReader(RBSP.decode(nal.dropFirst(type == 7 ? 4 : 1)))
            guard let id = try? reader.readUE("id") else { return true }
            let key = type << 16 | id
            guard let first = firstOfId[key] else { firstOfId[key] = nal; return false }
            return first != nal
        }
        #expect(try AVCC.nalUnits(in: moved.data, lengthSize: 4).map { Array(moved.data[$0]) } == others)
        #expect(!moved.sequenceParameterSets.isEmpty)
        #expect(!moved.pictureParameterSets.isEmpty)
        // Re-inserting them from the record before IDR pictures gives decodable Annex-B whose
        // first NAL units are parameter sets.
        let record = try moved.configurationRecord()
        let restored = try AnnexB.fromAVCCStream(moved.data, lengthSize: 4, parameterSets: record)
        let restoredTypes = AnnexB.nalUnits(in: restored).map { restored[$0.range.lowerBound] & 0x1F }
        if let firstIDR = restoredTypes.firstIndex(of: 5) {
            #expect(restoredTypes[..<firstIDR].contains(7))
            #expect(restoredTypes[..<firstIDR].contains(8))
        }
    }
}
