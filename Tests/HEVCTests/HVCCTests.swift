import Testing
import H264
import HEVC
import H264TestSupport

/// The `hvcC` record and HVCC ⇄ Annex-B conversion.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HVCCTests {
    static let mp4ToAnnexBStreams = ["scaling_lists_strong_intra.265", "slices4_vui_hrd_aud.265", "tiny_16x16.265"]

    /// The shared stream as MP4 samples (parameter sets in band, hvcC of the first VPS/SPS/PPS,
    /// as FFmpeg's MP4 muxer writes them) converted back gives exactly the bytes FFmpeg's
    /// `hevc_mp4toannexb` gives for the same MP4 (`Fixtures/hevc/mp4toannexb/`).
    @Test(arguments: mp4ToAnnexBStreams)
    func samplesConvertAsHevcMp4ToAnnexB(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let expected = try TestFixtures.data("hevc/mp4toannexb/\(stream)")
        let (record, samples) = try HEVCDecoderConfigurationRecord.hvcc(fromAnnexB: bytes, parameterSetsInBand: true)
        #expect(record.arrays.map(\.nalUnitType) == [.videoParameterSet, .sequenceParameterSet, .pictureParameterSet])
        let parsed = try HEVCDecoderConfigurationRecord(parsing: record.bytes)
        #expect(parsed == record)
        var ours: [UInt8] = []
        for sample in samples {
            ours += try AnnexB.fromHVCC(sample.data, lengthSize: parsed.nalUnitLengthSize, configuration: parsed)
        }
        // NAL unit by NAL unit: FFmpeg's MP4 samples end each access unit's last NAL unit with
        // the zero_byte of the next start code (its HEVC parser cuts after it), which comes
        // back as a trailing zero byte; the scanner leaves trailing zeros out on both sides.
        let theirs = AnnexB.nalUnits(in: expected)
        #expect(AnnexB.nalUnits(in: ours).map { Array(ours[$0.range]) } == theirs.map { Array(expected[$0.range]) })
        #expect(theirs.allSatisfy { $0.startCodeLength == 4 } && AnnexB.nalUnits(in: ours).allSatisfy { $0.startCodeLength == 4 })
        // One sample at a time, FFmpeg's rule (once a sample) gives the same bytes.
        var sampled: [UInt8] = []
        for sample in samples { sampled += try AnnexB.fromHVCCSample(sample.data, lengthSize: parsed.nalUnitLengthSize, configuration: parsed) }
        #expect(sampled == ours)
    }

    /// An MV-HEVC sample (Apple's spatial video: androidx/media's water_180_mvhevc_5frames.mov)
    /// holds two IRAP pictures, a layer-0 IDR and a layer-1 CRA. `hevc_mp4toannexb` puts the
    /// record's arrays once, before the sample's first IRAP NAL unit; so does
    /// `fromHVCCSample`, where the stream conversion `fromHVCC` puts them before each picture.
    @Test func anMVHEVCSampleGetsTheRecordOnce() throws {
        let record = try HEVCDecoderConfigurationRecord.hvcc(fromAnnexB: try TestFixtures.data("hevc/tiny_16x16.265"),
                                                             parameterSetsInBand: false).configuration
        // IDR_W_RADL (19) of layer 0 and CRA (21) of layer 1, first_slice_segment_in_pic_flag set.
        let idr: [UInt8] = [0x26, 0x01, 0x80, 0x55], cra: [UInt8] = [0x2A, 0x09, 0x80, 0x66]
        let sample = try AVCC.data(nalUnits: [idr, cra], lengthSize: 4)
        let units = { (b: [UInt8]) in AnnexB.nalUnits(in: b).map { Array(b[$0.range]) } }
        #expect(units(try AnnexB.fromHVCCSample(sample, lengthSize: 4, configuration: record)) == record.nalUnits + [idr, cra])
        #expect(units(try AnnexB.fromHVCC(sample, lengthSize: 4, configuration: record)) == record.nalUnits + [idr] + record.nalUnits + [cra])
    }

    /// With `hvc1`, parameter sets leave the samples for the record (arrays complete) and come
    /// back right before each IRAP picture's first slice segment; every other NAL unit is the
    /// stream's, in order.
    @Test(arguments: TestFixtures.hevcStreams)
    func hvc1RoundTripPutsTheRecordBeforeEachIRAP(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let (record, samples) = try HEVCDecoderConfigurationRecord.hvcc(fromAnnexB: bytes, parameterSetsInBand: false)
        #expect(samples.allSatisfy { !$0.nalUnitTypes.contains { $0.isParameterSet } })
        #expect(record.arrays.allSatisfy { $0.arrayCompleteness })
        let units = { (b: [UInt8]) in AnnexB.nalUnits(in: b).map { Array(b[$0.range]) } }
        let type = { (unit: [UInt8]) in HEVCNALUnitHeader(unit[0], unit[1]).nalUnitType }
        for sample in samples {
            let back = units(try AnnexB.fromHVCC(sample.data, lengthSize: 4, configuration: record))
            let original = sample.nalUnits.map(Array.init)
            #expect(back.filter { !type($0).isParameterSet } == original)
            if let irap = back.firstIndex(where: { type($0).isIRAP }) {
                #expect(Array(back[(irap - record.nalUnits.count)..<irap]) == record.nalUnits)
            } else {
                #expect(back == original)
            }
        }
    }

    /// The fields of the record x265's Main stream gives, and their bytes (ISO/IEC 14496-15 §8.3.3.1).
    @Test func recordFieldsAndLayout() throws {
        let bytes = try TestFixtures.data("hevc/tiny_16x16.265")
        let record = try HEVCDecoderConfigurationRecord.hvcc(fromAnnexB: bytes, parameterSetsInBand: false).configuration
        #expect(record.configurationVersion == 1 && record.generalProfileIdc == 1 && record.generalLevelIdc == 30)
        #expect(record.generalProfileCompatibilityFlags == 0x6000_0000)
        #expect(record.chromaFormat == 1 && record.bitDepthLumaMinus8 == 0 && record.lengthSizeMinusOne == 3)
        #expect(record.numTemporalLayers == 1 && record.temporalIdNested)
        let encoded = record.bytes
        #expect(encoded[0] == 1 && encoded[1] == 0x01 && encoded[21] & 3 == 3 && encoded[22] == 3)
        #expect(encoded[23] == 0x80 | 32)
        for cut in [0, 1, 22, 23, 26, encoded.count - 1] {
            #expect(throws: MediaError.self) { try HEVCDecoderConfigurationRecord(parsing: Array(encoded.prefix(cut))) }
        }
        var version2 = encoded
        version2[0] = 2
        #expect(throws: MediaError(.invalidConfigurationRecord, field: "configurationVersion", byteOffset: 0, "version 2, expected 1")) {
            try HEVCDecoderConfigurationRecord(parsing: version2)
        }
    }

    /// `recognizing` tells an `hvcC` from anything else (how `h264 convert --config` picks the
    /// codec): every shared stream's record is one; the `avcC` of every H.264 conformance stream and garbage are not.
    @Test func recognizesAnHVCCAndNothingElse() throws {
        for stream in TestFixtures.hevcStreams {
            let record = try HEVCDecoderConfigurationRecord.hvcc(fromAnnexB: try TestFixtures.data("hevc/\(stream)"), parameterSetsInBand: false).configuration
            #expect(HEVCDecoderConfigurationRecord.recognizing(record.bytes) == record, "\(stream)")
        }
        var avcCs = 0
        for stream in TestFixtures.conformanceStreams {
            let converted = try AVCC.fromAnnexB(try TestFixtures.data("conformance/\(stream)"), lengthSize: 4, parameterSets: .configuration)
            guard let avcC = try? AVCDecoderConfigurationRecord(sequenceParameterSets: converted.sequenceParameterSets,
                                                                 pictureParameterSets: converted.pictureParameterSets,
                                                                 nalUnitLengthSize: 4).serialized() else { continue }
            avcCs += 1
            #expect(HEVCDecoderConfigurationRecord.recognizing(avcC) == nil, "\(stream)")
        }
        #expect(avcCs > 50)
        #expect(HEVCDecoderConfigurationRecord.recognizing([]) == nil && HEVCDecoderConfigurationRecord.recognizing([1, 2, 3]) == nil)
    }
}

extension HVCCTests {
    /// A record built from an SPS of 16-bit samples (`bit_depth_luma_minus8` = 8, which the
    /// record's 3-bit field cannot hold) reads back as it was built, with the field at its maximum 7.
    /// Found by `Scripts/fuzz.sh` (target `hevc-ps`); the input is the fuzzer's.
    @Test func recordOfSixteenBitSamplesReadsBack() throws {
        let bytes = Self.hex("000000014201010408000003009e080000030000ff90020408212cb2b349265780b4040000030004000003007820")
        let units = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
        #expect(try HEVCSequenceParameterSet(nalUnit: units[0]).bitDepthLumaMinus8 == 8)
        let built = try HEVCDecoderConfigurationRecord(parameterSets: units)
        #expect(built.bitDepthLumaMinus8 == 7 && built.bitDepthChromaMinus8 == 2)
        #expect(try HEVCDecoderConfigurationRecord(parsing: built.bytes) == built)
    }

    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }
}
