import H264
import H264TestSupport
import Testing

/// Values out of range in elements that do not change how the rest is read (clause 7.4.2.1.1
/// reserved bits and level limits; Annex E colour description, timing, bitstream restriction,
/// HRD): the parameter set is read, the value is kept, and one warning with the code, field and
/// bit offset an error would have is recorded. Streams are written element by element with the
/// test `BitWriter` (the `SPS` and `PPS` builders of `MalformedInputTests`).
@Suite(.ownThread) struct TolerableValueTests {
    /// Bit positions of named elements, noted while a NAL unit is written (relative to the first
    /// bit after the header byte).
    final class Marks {
        var positions: [String: Int] = [:]
        func note(_ name: String, _ writer: BitWriter) { positions[name] = writer.bitPosition }
    }

    /// What a VUI holds; nil sections are absent.
    struct VUI {
        var aspectRatioIdc: Int?
        var videoFormat = 5
        var colour: (primaries: Int, transfer: Int, matrix: Int)?
        var videoSignalType = false
        var chromaLoc: (top: Int, bottom: Int)?
        var timing: (numUnitsInTick: Int, timeScale: Int)?
        var hrdBitRates: [(bitRate: Int, cpbSize: Int)]?
        /// max_bytes_per_pic_denom, max_bits_per_mb_denom, log2_max_mv_length_horizontal,
        /// log2_max_mv_length_vertical, max_num_reorder_frames, max_dec_frame_buffering.
        var restriction: [Int]?

        static let restrictionNames = ["max_bytes_per_pic_denom", "max_bits_per_mb_denom", "log2_max_mv_length_horizontal",
                                       "log2_max_mv_length_vertical", "max_num_reorder_frames", "max_dec_frame_buffering"]

        func write(_ w: inout BitWriter, _ marks: Marks) {
            w.bit(aspectRatioIdc != nil)
            if let aspectRatioIdc { marks.note("aspect_ratio_idc", w); w.bits(aspectRatioIdc, 8) }
            w.bit(false)                                  // overscan_info_present_flag
            w.bit(videoSignalType || colour != nil)
            if videoSignalType || colour != nil {
                marks.note("video_format", w); w.bits(videoFormat, 3)
                w.bit(false)                              // video_full_range_flag
                w.bit(colour != nil)
                if let colour {
                    marks.note("colour_primaries", w); w.bits(colour.primaries, 8)
                    marks.note("transfer_characteristics", w); w.bits(colour.transfer, 8)
                    marks.note("matrix_coefficients", w); w.bits(colour.matrix, 8)
                }
            }
            w.bit(chromaLoc != nil)
            if let chromaLoc {
                marks.note("chroma_sample_loc_type_top_field", w); w.ue(chromaLoc.top)
                marks.note("chroma_sample_loc_type_bottom_field", w); w.ue(chromaLoc.bottom)
            }
            w.bit(timing != nil)
            if let timing {
                marks.note("num_units_in_tick", w); w.bits(timing.numUnitsInTick, 32)
                marks.note("time_scale", w); w.bits(timing.timeScale, 32)
                w.bit(true)                               // fixed_frame_rate_flag
            }
            w.bit(hrdBitRates != nil)                     // nal_hrd_parameters_present_flag
            if let hrdBitRates {
                w.ue(hrdBitRates.count - 1)               // cpb_cnt_minus1
                w.bits(0, 4); w.bits(0, 4)                // bit_rate_scale, cpb_size_scale
                for (i, entry) in hrdBitRates.enumerated() {
                    marks.note("bit_rate_value_minus1[\(i)]", w); w.ue(entry.bitRate)
                    marks.note("cpb_size_value_minus1[\(i)]", w); w.ue(entry.cpbSize)
                    w.bit(false)                          // cbr_flag
                }
                w.bits(23, 5); w.bits(23, 5); w.bits(23, 5); w.bits(24, 5)
            }
            w.bit(false)                                  // vcl_hrd_parameters_present_flag
            if hrdBitRates != nil { w.bit(false) }        // low_delay_hrd_flag
            w.bit(false)                                  // pic_struct_present_flag
            w.bit(restriction != nil)
            if let restriction {
                w.bit(true)                               // motion_vectors_over_pic_boundaries_flag
                for (name, value) in zip(Self.restrictionNames, restriction) { marks.note(name, w); w.ue(value) }
            }
        }
    }

    /// One tolerable field each; `restrictionOK` is a valid bitstream restriction to vary.
    static let restrictionOK = [2, 1, 15, 15, 2, 4]

    enum Field: String, CaseIterable, Sendable {
        case log2MaxMvLengthHorizontal16, log2MaxMvLengthVertical16, maxBytesPerPicDenom17, maxBitsPerMbDenom17
        case maxNumReorderFrames17, maxDecFrameBuffering17, maxDecFrameBufferingBelowReorder
        case numUnitsInTickZero, timeScaleZero, colourPrimariesReserved, transferCharacteristicsReserved
        case matrixCoefficientsReserved, videoFormatReserved, aspectRatioIdcReserved, chromaSampleLocType6
        case reservedZero2BitsSet, levelIdcUnknown, frameTooLargeForLevel, hrdBitRateNotIncreasing

        /// The SPS, the field(s) warned about, and a check that the value was kept.
        func make() -> (sps: [UInt8], marks: Marks, fields: [String], kept: @Sendable (SequenceParameterSet) -> Bool) {
            var vui = VUI()
            var sps = SPS()
            var fields: [String] = []
            var kept: @Sendable (SequenceParameterSet) -> Bool = { _ in true }
            func restriction(_ index: Int, _ value: Int) {
                var values = restrictionOK
                values[index] = value
                if index == 4 { values[5] = max(values[5], value) }
                vui.restriction = values
                fields = [VUI.restrictionNames[index]]
            }
            switch self {
            case .log2MaxMvLengthHorizontal16:
                restriction(2, 16); kept = { $0.vuiParameters?.log2MaxMvLengthHorizontal == 16 }
            case .log2MaxMvLengthVertical16:
                restriction(3, 16); kept = { $0.vuiParameters?.log2MaxMvLengthVertical == 16 }
            case .maxBytesPerPicDenom17:
                restriction(0, 17); kept = { $0.vuiParameters?.maxBytesPerPicDenom == 17 }
            case .maxBitsPerMbDenom17:
                restriction(1, 17); kept = { $0.vuiParameters?.maxBitsPerMbDenom == 17 }
            case .maxNumReorderFrames17:
                // max_dec_frame_buffering follows it up to 17: both are out of range.
                restriction(4, 17); fields = ["max_num_reorder_frames", "max_dec_frame_buffering"]
                kept = { $0.vuiParameters?.maxNumReorderFrames == 17 }
            case .maxDecFrameBuffering17:
                restriction(5, 17); kept = { $0.vuiParameters?.maxDecFrameBuffering == 17 }
            case .maxDecFrameBufferingBelowReorder:
                restriction(5, 1); kept = { $0.vuiParameters?.maxDecFrameBuffering == 1 }
            case .numUnitsInTickZero:
                vui.timing = (0, 50); fields = ["num_units_in_tick"]
                kept = { $0.vuiParameters?.numUnitsInTick == 0 && $0.frameRate == nil }
            case .timeScaleZero:
                vui.timing = (1, 0); fields = ["time_scale"]; kept = { $0.vuiParameters?.timeScale == 0 }
            case .colourPrimariesReserved:
                vui.colour = (0, 1, 1); fields = ["colour_primaries"]; kept = { $0.vuiParameters?.colourPrimaries == 0 }
            case .transferCharacteristicsReserved:
                vui.colour = (1, 3, 1); fields = ["transfer_characteristics"]
                kept = { $0.vuiParameters?.transferCharacteristics == 3 }
            case .matrixCoefficientsReserved:
                vui.colour = (1, 1, 200); fields = ["matrix_coefficients"]
                kept = { $0.vuiParameters?.matrixCoefficients == 200 }
            case .videoFormatReserved:
                vui.videoSignalType = true; vui.videoFormat = 6; fields = ["video_format"]
                kept = { $0.vuiParameters?.videoFormat == 6 }
            case .aspectRatioIdcReserved:
                vui.aspectRatioIdc = 17; fields = ["aspect_ratio_idc"]
                kept = { $0.vuiParameters?.aspectRatioIdc == 17 && $0.vuiParameters?.sampleAspectRatio == nil }
            case .chromaSampleLocType6:
                vui.chromaLoc = (6, 0); fields = ["chroma_sample_loc_type_top_field"]
                kept = { $0.vuiParameters?.chromaSampleLocTypeTopField == 6 }
            case .reservedZero2BitsSet:
                sps.constraintByte = 0xC1; fields = ["reserved_zero_2bits"]; kept = { $0.reservedZero2Bits == 1 }
            case .levelIdcUnknown:
                sps.levelIdc = 14; fields = ["level_idc"]; kept = { $0.levelIdc == 14 }
            case .frameTooLargeForLevel:
                // 11 × 10 = 110 macroblocks; level 1.0 allows 99.
                sps.levelIdc = 10; sps.picHeightInMapUnitsMinus1 = 9; fields = ["level_idc"]
                kept = { $0.levelIdc == 10 && $0.frameSizeInMbs == 110 }
            case .hrdBitRateNotIncreasing:
                vui.hrdBitRates = [(100, 100), (100, 50)]; fields = ["bit_rate_value_minus1[1]"]
                kept = { $0.vuiParameters?.nalHrdParameters?.bitRateValueMinus1 == [100, 100] }
            }
            let marks = Marks()
            if self != .reservedZero2BitsSet && self != .levelIdcUnknown && self != .frameTooLargeForLevel {
                let vuiToWrite = vui
                sps.vui = { w in vuiToWrite.write(&w, marks) }
            }
            // Header-part elements: profile_idc (8), six flags, then reserved_zero_2bits, level_idc.
            marks.positions["reserved_zero_2bits"] = 14
            marks.positions["level_idc"] = 16
            return (sps.nalUnit, marks, fields, kept)
        }
    }

    @Test(arguments: Field.allCases)
    func keptWithOneWarning(_ field: Field) throws {
        let made = field.make()
        let sps = try SequenceParameterSet(nalUnit: made.sps)
        #expect(made.kept(sps), "the value is kept")
        #expect(sps.diagnostics.map(\.code) == made.fields.map { _ in .valueOutOfRange })
        #expect(sps.diagnostics.map(\.field) == made.fields)
        // Bit offsets count from the first bit of the header byte, as an error's do.
        #expect(sps.diagnostics.map(\.bitOffset) == made.fields.map { made.marks.positions[$0].map { $0 + 8 } })
        #expect(sps.diagnostics.allSatisfy { $0.byteOffset == nil })
        // The rest reads as without the value: the same syntax elements follow.
        #expect(try SequenceParameterSet.syntaxElements(nalUnit: made.sps).last?.name.hasPrefix("rbsp_") == true)
    }

    @Test func aCleanSPSHasNoDiagnostics() throws {
        var sps = SPS()
        let vui = VUI(colour: (1, 1, 1), chromaLoc: (0, 0), timing: (1, 50), hrdBitRates: [(10, 100), (20, 50)],
                      restriction: Self.restrictionOK)
        sps.vui = { w in vui.write(&w, Marks()) }
        #expect(try SequenceParameterSet(nalUnit: sps.nalUnit).diagnostics.isEmpty)
    }

    @Test func picInitQsOutOfRangeIsKeptWithAWarning() throws {
        var w = BitWriter()
        w.ue(0); w.ue(0); w.bit(false); w.bit(false); w.ue(0); w.ue(0); w.ue(0); w.bit(false); w.bits(0, 2)
        w.se(0)                                           // pic_init_qp_minus26
        let at = w.bitPosition
        w.se(30)                                          // pic_init_qs_minus26, beyond 25
        w.se(0)                                           // chroma_qp_index_offset
        w.bit(true); w.bit(false); w.bit(false)
        w.trailingBits()
        let pps = try PictureParameterSet(nalUnit: w.nalUnit(type: 8))
        #expect(pps.picInitQsMinus26 == 30)
        #expect(pps.diagnostics == [MediaError(.valueOutOfRange, field: "pic_init_qs_minus26", bitOffset: at + 8,
                                              "30 is outside -26...25 (kept)")])
    }

    @Test func idrPicIdAbove65535IsKeptWithAWarning() throws {
        var cache = ParameterSetCache()
        try cache.store(SyntheticStream.sps())
        try cache.store(SyntheticStream.pps())
        let slice = try SliceHeader(nalUnit: SyntheticStream.slice(idr: true, idrPicId: 70_000), parameterSets: cache)
        #expect(slice.idrPicId == 70_000)
        #expect(slice.diagnostics.map(\.field) == ["idr_pic_id"])
        // first_mb_in_slice (1 bit), slice_type 7 (7 bits), pps 0 (1 bit), frame_num (4 bits), after the header byte.
        #expect(slice.diagnostics.first?.bitOffset == 13)
    }

    /// A stream whose SPS carries `log2_max_mv_length_horizontal` = 16 is assembled exactly as the
    /// same stream with a clean SPS; the assembler records the warning once although the SPS is
    /// repeated, with the SPS's stream offset.
    @Test func aStreamWithATolerableSPSAssemblesAsACleanOne() throws {
        let tolerant = Field.log2MaxMvLengthHorizontal16.make().sps
        var cleanSPS = SPS()
        let clean = VUI(restriction: Self.restrictionOK)
        cleanSPS.vui = { w in clean.write(&w, Marks()) }
        func stream(_ sps: [UInt8]) -> [UInt8] {
            let units = [sps, SyntheticStream.pps(), SyntheticStream.slice(idr: true),
                         SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
                         sps, SyntheticStream.slice(idr: true, frameNum: 0, idrPicId: 1)]
            return units.flatMap { AnnexB.fourByteStartCode + $0 }
        }
        func assemble(_ bytes: [UInt8]) -> (types: [[NALUnitType]], assembler: AccessUnitAssembler) {
            var assembler = AccessUnitAssembler()
            var units: [AccessUnit] = []
            for location in AnnexB.nalUnits(in: bytes) {
                if let unit = assembler.append(nalUnit: bytes[location.range], streamOffset: location.startCodeOffset) { units.append(unit) }
            }
            if let last = assembler.finish(streamLength: bytes.count) { units.append(last) }
            return (units.map(\.nalUnitTypes), assembler)
        }
        let got = assemble(stream(tolerant))
        let want = assemble(stream(cleanSPS.nalUnit))
        #expect(got.types == want.types)
        #expect(got.types.count == 3)
        #expect(got.assembler.errorCount == 0)
        #expect(got.assembler.warningCount == 1)
        #expect(got.assembler.recentWarnings.map(\.field) == ["log2_max_mv_length_horizontal"])
        #expect(got.assembler.recentWarnings.first?.byteOffset == 0)
        #expect(want.assembler.warningCount == 0)
        #expect(got.assembler.recentWarnings.first?.bitOffset == (try SequenceParameterSet(nalUnit: tolerant)).diagnostics.first?.bitOffset)
    }
}
