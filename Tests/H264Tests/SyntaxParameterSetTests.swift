import Foundation
import Testing
import H264
import H264TestSupport

// MARK: - x264-made fixtures (Fixtures/x264, see Fixtures/PROVENANCE and Scripts/make-x264-fixtures.sh)

private let x264Fixtures = [
    "vui_hrd_high_160x96", "high422_10bit_tff_80x44", "high444_cqmjvt_80x44",
    "high_cqmfile_80x44", "baseline_level1b_80x44",
]

private struct X264Fixture {
    var stream: [UInt8]
    var json: [String: Any]
    var probe: [String: Any]
    var sps: SequenceParameterSet
    var pps: PictureParameterSet

    init(_ name: String) throws {
        stream = try TestFixtures.data("x264/\(name).264")
        json = try #require(try JSONSerialization.jsonObject(with: Data(TestFixtures.data("x264/\(name).json"))) as? [String: Any])
        probe = try #require(json["ffprobe"] as? [String: Any])
        let units = ReferenceAnnexB.split(stream)
        sps = try SequenceParameterSet(nalUnit: try #require(units.first { $0.first! & 0x1F == 7 }))
        pps = try PictureParameterSet(nalUnit: try #require(units.first { $0.first! & 0x1F == 8 }),
                                      sequenceParameterSets: [sps.seqParameterSetId: sps])
    }

    /// ffprobe's `"num/den"` string as numbers.
    func ratio(_ key: String) throws -> (Int, Int) {
        let parts = try #require(probe[key] as? String).split(whereSeparator: { $0 == "/" || $0 == ":" }).compactMap { Int($0) }
        try #require(parts.count == 2)
        return (parts[0], parts[1])
    }
}

@Suite(.ownThread) struct SyntaxX264FixtureTests {
    /// Our element dump of each distinct SPS/PPS equals FFmpeg's trace_headers reading.
    @Test(arguments: x264Fixtures + ["baseline_slicegroups_80x44"])
    func dumpMatchesFFmpeg(name: String) throws {
        let fixture = try X264Fixture(name)
        let expected = try ExpectedStream.parse(Data(TestFixtures.data("x264/\(name).json")))
        let ours = try dumpParameterSets(fixture.stream)
        #expect(!expected.sps.isEmpty && !expected.pps.isEmpty)
        #expect(ours.sps.count == expected.sps.count)
        #expect(ours.pps.count == expected.pps.count)
        for (a, b) in zip(ours.sps, expected.sps) { #expect(a == b, "SPS differs: \(firstDifference(a, b))") }
        for (a, b) in zip(ours.pps, expected.pps) { #expect(a == b, "PPS differs: \(firstDifference(a, b))") }
    }

    @Test(arguments: x264Fixtures)
    func derivedValuesMatchFFprobe(name: String) throws {
        let fixture = try X264Fixture(name)
        #expect(fixture.sps.profileName == fixture.probe["profile"] as? String)
        #expect(fixture.sps.levelIdc == fixture.probe["level"] as? Int)
        #expect(fixture.sps.displayWidth == fixture.probe["width"] as? Int)
        #expect(fixture.sps.displayHeight == fixture.probe["height"] as? Int)
        let (num, den) = try fixture.ratio("r_frame_rate")
        let rate = try #require(fixture.sps.frameRate)
        #expect(abs(rate - Double(num) / Double(den)) < 1e-9)
        if fixture.probe["sample_aspect_ratio"] != nil {
            let sar = try #require(fixture.sps.vuiParameters?.sampleAspectRatio)
            let (w, h) = try fixture.ratio("sample_aspect_ratio")
            #expect(sar.width == w && sar.height == h)
        }
    }

    /// x264 options: --sar 4:3 --nal-hrd vbr --vbv-bufsize 1000 --vbv-maxrate 800 --colorprim bt709
    /// --range pc --chromaloc 1 --overscan show --videoformat pal.
    @Test func vuiAndHRDCarryTheEncoderOptions() throws {
        let sps = try X264Fixture("vui_hrd_high_160x96").sps
        let vui = try #require(sps.vuiParameters)
        #expect(vui.aspectRatioIdc == 14)              // Table E-1: 4:3
        #expect(vui.overscanInfoPresentFlag && !vui.overscanAppropriateFlag)
        #expect(vui.videoFormat == 1)                  // Table E-2: PAL
        #expect(vui.videoFullRangeFlag)
        #expect(vui.colourPrimaries == 1 && vui.transferCharacteristics == 1 && vui.matrixCoefficients == 1)
        #expect(vui.chromaSampleLocTypeTopField == 1 && vui.chromaSampleLocTypeBottomField == 1)
        let hrd = try #require(vui.nalHrdParameters)
        #expect(vui.vclHrdParameters == nil)
        #expect(hrd.cpbCntMinus1 == 0 && hrd.cbrFlag == [false])
        #expect(hrd.bitRate(at: 0) == 800_000)         // --vbv-maxrate 800 (kbit/s)
        #expect(hrd.cpbSize(at: 0) == 1_000_000)       // --vbv-bufsize 1000 (kbit)
        #expect(hrd.bitRate(at: 1) == nil)
    }

    /// --output-csp i422 --output-depth 10 --tff --sar 7:5 on an 80x44 input.
    @Test func interlaced422TenBit() throws {
        let sps = try X264Fixture("high422_10bit_tff_80x44").sps
        #expect(sps.chromaFormatIdc == 2 && sps.chromaArrayType == 2)
        #expect(sps.bitDepthLuma == 10 && sps.bitDepthChroma == 10)
        #expect(!sps.frameMbsOnlyFlag)
        #expect(sps.cropUnitX == 2 && sps.cropUnitY == 2)   // SubHeightC 1 × (2 − frame_mbs_only_flag)
        #expect(sps.codedHeight % 32 == 0 && sps.codedHeight >= 44)
        #expect(sps.vuiParameters?.aspectRatioIdc == 255)    // Extended_SAR
        #expect(sps.vuiParameters?.nalHrdParameters?.cbrFlag == [true])
    }

    /// --output-csp i444 --cqm jvt: x264 signals every list as "use the default" (delta_scale −8).
    @Test func jvtMatrixResolvesToTheDefaultTables() throws {
        let fixture = try X264Fixture("high444_cqmjvt_80x44")
        #expect(fixture.sps.chromaArrayType == 3 && fixture.sps.cropUnitX == 1 && fixture.sps.cropUnitY == 1)
        #expect(fixture.pps.transform8x8ModeFlag && fixture.pps.picScalingMatrixPresentFlag)
        #expect(fixture.pps.picScalingLists.count == 12)
        let matrix = fixture.pps.scalingMatrix(sequenceParameterSet: fixture.sps)
        #expect(matrix.lists4x4.prefix(3).allSatisfy { $0 == .default4x4Intra })
        #expect(matrix.lists4x4.suffix(3).allSatisfy { $0 == .default4x4Inter })
        #expect(matrix.lists8x8 == [.default8x8Intra, .default8x8Inter, .default8x8Intra, .default8x8Inter, .default8x8Intra, .default8x8Inter])
        #expect(fixture.sps.scalingMatrix == .flat)
    }

    /// --cqmfile (see the script): intra 4x4 luma all 20, inter 4x4 luma all 18, intra 8x8 a ramp
    /// 8…22, inter 8x8 all 24; the file has no chroma lists, for which x264 takes flat 16 and codes
    /// Cb explicitly and Cr as "not present" (fall-back rule A: Cr = Cb). Scan order does not
    /// matter for constant lists, and the ramp is compared as a multiset.
    @Test func customMatrixResolvesToTheFileValues() throws {
        let fixture = try X264Fixture("high_cqmfile_80x44")
        let matrix = fixture.pps.scalingMatrix(sequenceParameterSet: fixture.sps)
        #expect(fixture.pps.picScalingListPresentFlag == [true, true, false, true, true, false, true, true])
        let constant = matrix.lists4x4.map { Set($0.values) }
        #expect(constant == [[20], [16], [16], [18], [16], [16]])
        let ramp = (0..<64).map { 8 + $0 / 8 + $0 % 8 }
        #expect(matrix.lists8x8[0].values.sorted() == ramp.sorted())
        #expect(matrix.lists8x8[1].values == Array(repeating: 24, count: 64))
    }

    /// Hand-assembled slice-group PPSs (see the script) after x264's 80x48 Baseline SPS.
    @Test func sliceGroupsAreKeptAsValues() throws {
        let units = ReferenceAnnexB.split(try TestFixtures.data("x264/baseline_slicegroups_80x44.264"))
        let sps = try SequenceParameterSet(nalUnit: try #require(units.first))
        let sets = try units.filter { $0.first! & 0x1F == 8 }.map {
            try PictureParameterSet(nalUnit: $0, sequenceParameterSets: [sps.seqParameterSetId: sps])
        }
        try #require(sets.count == 5)
        #expect(sets.allSatisfy { $0.usesSliceGroups })
        #expect(sets[0].sliceGroupMapType == 0 && sets[0].runLengthMinus1 == [4, 2, 7])
        #expect(sets[1].topLeft == [0, 5] && sets[1].bottomRight == [6, 14])
        #expect(sets[2].sliceGroupChangeDirectionFlag && sets[2].sliceGroupChangeRateMinus1 == 3)
        #expect(sets[3].picSizeInMapUnitsMinus1 == 14 && sets[3].sliceGroupId == (0..<15).map { $0 % 5 })
        #expect(sets[4].sliceGroupMapType == 1 && sets[4].numSliceGroups == 2)
        // With the SPS, pic_size_in_map_units_minus1 must be PicSizeInMapUnits − 1 (clause 7.4.2.2).
        var w = BitWriter()
        w.ue(9); w.ue(sps.seqParameterSetId); w.bits(0, 1); w.bits(0, 1)
        w.ue(1); w.ue(6); w.ue(13)     // two slice groups, map type 6, 14 map units instead of 15
        for _ in 0..<14 { w.bits(0, 1) }
        w.trailingBits()
        expectError(.valueOutOfRange, field: "pic_size_in_map_units_minus1") { () throws(MediaError) in
            _ = try PictureParameterSet(nalUnit: w.nalUnit(type: 8), sequenceParameterSets: [sps.seqParameterSetId: sps])
        }
    }

    /// --profile baseline --level 1b: level_idc 11 with constraint_set3_flag (clause A.3.1).
    @Test func levelOneB() throws {
        let sps = try X264Fixture("baseline_level1b_80x44").sps
        #expect(sps.level.isLevel1b)
        #expect(sps.level.description == "1b")
        #expect(sps.picOrderCntType == 2)   // x264 without B-frames
    }
}

// MARK: - Hand-assembled parameter sets

/// A Baseline SPS per clause 7.3.2.1.1 with the values given (defaults: 176x144, POC type 0).
private func baselineSPS(id: Int = 0, log2MaxFrameNumMinus4: Int = 0, pocType: Int = 0, pocCycle: Int = 0,
                         widthMinus1: Int = 10, heightMinus1: Int = 8,
                         crop: (Int, Int, Int, Int)? = nil, idRaw: ((inout BitWriter) -> Void)? = nil) -> [UInt8] {
    var w = BitWriter()
    w.bits(66, 8); w.bits(0xC0, 8); w.bits(30, 8)   // profile_idc, constraint flags, level_idc
    if let idRaw { idRaw(&w) } else { w.ue(id) }
    w.ue(log2MaxFrameNumMinus4)
    w.ue(pocType)
    if pocType == 0 { w.ue(0) }
    if pocType == 1 {
        w.bits(0, 1); w.se(0); w.se(0); w.ue(pocCycle)
        for _ in 0..<pocCycle { w.se(1) }
    }
    w.ue(1); w.bits(0, 1)               // max_num_ref_frames, gaps_in_frame_num_value_allowed_flag
    w.ue(widthMinus1); w.ue(heightMinus1)
    w.bits(1, 1); w.bits(1, 1)             // frame_mbs_only_flag, direct_8x8_inference_flag
    if let crop {
        w.bits(1, 1); w.ue(crop.0); w.ue(crop.1); w.ue(crop.2); w.ue(crop.3)
    } else {
        w.bits(0, 1)
    }
    w.bits(0, 1)                        // vui_parameters_present_flag
    w.trailingBits()
    return w.nalUnit(type: 7)
}

/// A PPS per clause 7.3.2.2; `tail` adds transform_8x8_mode_flag 1 and pic_scaling_matrix_present_flag 1.
private func pps(id: Int = 0, spsID: Int = 0, tail: Bool = false) -> [UInt8] {
    var w = BitWriter()
    w.ue(id); w.ue(spsID)
    w.bits(0, 1); w.bits(0, 1); w.ue(0)    // entropy_coding_mode_flag, bottom_field_pic_order…, num_slice_groups_minus1
    w.ue(0); w.ue(0); w.bits(0, 1); w.bits(0, 2)
    w.se(0); w.se(0); w.se(0)
    w.bits(1, 1); w.bits(0, 1); w.bits(0, 1)
    if tail {
        w.bits(1, 1); w.bits(1, 1)
        for _ in 0..<8 { w.bits(0, 1) }  // pic_scaling_list_present_flag[i] (8 lists for 4:2:0)
        w.se(0)
    }
    w.trailingBits()
    return w.nalUnit(type: 8)
}

private func expectError(_ code: MediaError.Code, field: String?, _ body: () throws(MediaError) -> Void,
                         sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        try body()
        Issue.record("no error thrown, expected \(code)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.field == field, "\(error)", sourceLocation: sourceLocation)
    }
}

@Suite(.ownThread) struct SyntaxParameterSetErrorTests {
    @Test func handAssembledSetsParse() throws {
        let sps = try SequenceParameterSet(nalUnit: baselineSPS(crop: (1, 2, 3, 4)))
        #expect(sps.codedWidth == 176 && sps.codedHeight == 144)
        #expect(sps.cropRect == (2, 6, 170, 130))   // CropUnitX = CropUnitY = 2 for 4:2:0 frames
        #expect(sps.profileName == "Constrained Baseline" && sps.level.description == "3.0")
        #expect(sps.frameRate == nil && sps.maxFrameNum == 16)
        let parsed = try PictureParameterSet(nalUnit: pps(tail: true), sequenceParameterSets: [0: sps])
        #expect(parsed.transform8x8ModeFlag && parsed.picScalingLists.count == 8)
        #expect(parsed.scalingMatrix(sequenceParameterSet: sps).lists4x4[0] == .default4x4Intra)  // rule A
        let plain = try PictureParameterSet(nalUnit: pps())
        #expect(plain.secondChromaQpIndexOffset == plain.chromaQpIndexOffset && !plain.usesSliceGroups)
    }

    @Test func spsIDAbove31() {
        expectError(.valueOutOfRange, field: "seq_parameter_set_id") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: baselineSPS(id: 32))
        }
    }

    @Test func log2MaxFrameNumAbove12() {
        expectError(.valueOutOfRange, field: "log2_max_frame_num_minus4") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: baselineSPS(log2MaxFrameNumMinus4: 13))
        }
    }

    @Test func pocCycleAbove255() {
        expectError(.valueOutOfRange, field: "num_ref_frames_in_pic_order_cnt_cycle") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: baselineSPS(pocType: 1, pocCycle: 256))
        }
    }

    // 176 samples wide = 88 crop units: left + right ≤ 87.
    @Test(arguments: [((88, 0, 0, 0), "frame_crop_left_offset"), ((40, 48, 0, 0), "frame_crop_right_offset"),
                      ((0, 0, 72, 0), "frame_crop_top_offset"), ((0, 0, 1, 71), "frame_crop_bottom_offset")])
    func cropOutsideThePicture(crop: (Int, Int, Int, Int), field: String) {
        expectError(.valueOutOfRange, field: field) { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: baselineSPS(crop: crop))
        }
    }

    @Test func cropOfAllButOneUnitIsAccepted() throws {
        let sps = try SequenceParameterSet(nalUnit: baselineSPS(crop: (40, 47, 0, 71)))
        #expect(sps.displayWidth == 2 && sps.displayHeight == 2)
    }

    @Test func hugePictureOverflows() {
        expectError(.overflow, field: "pic_width_in_mbs_minus1") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: baselineSPS(widthMinus1: Int(UInt32.max) - 1))
        }
    }

    @Test func truncatedSPS() {
        let full = baselineSPS()
        expectError(.truncated, field: "level_idc") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: full.prefix(3))
        }
    }

    @Test func expGolombOverflow() {
        expectError(.expGolombOverflow, field: "seq_parameter_set_id") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: baselineSPS(idRaw: { w in w.bits(0, 32); w.bits(1, 1); w.bits(0, 32) }))
        }
    }

    @Test func wrongHeader() {
        expectError(.unexpectedNALUnitType, field: "nal_unit_type") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: pps())
        }
        expectError(.unexpectedNALUnitType, field: "nal_unit_type") { () throws(MediaError) in
            _ = try PictureParameterSet(nalUnit: baselineSPS())
        }
        expectError(.forbiddenZeroBit, field: "forbidden_zero_bit") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: [0xE7] + baselineSPS().dropFirst())
        }
        expectError(.emptyNALUnit, field: "nal_unit_header") { () throws(MediaError) in
            _ = try SequenceParameterSet(nalUnit: [UInt8]())
        }
    }

    @Test func ppsNeedingAMissingSPS() {
        expectError(.missingParameterSet, field: "seq_parameter_set_id") { () throws(MediaError) in
            _ = try PictureParameterSet(nalUnit: pps(spsID: 3, tail: true), sequenceParameterSets: [:])
        }
    }

    @Test func ppsIDAbove255() {
        expectError(.valueOutOfRange, field: "pic_parameter_set_id") { () throws(MediaError) in
            _ = try PictureParameterSet(nalUnit: pps(id: 256))
        }
    }

    /// Every truncation and every single-bit flip of the x264-made parameter sets either parses
    /// or throws an `MediaError` — never traps.
    @Test func damagedParameterSetsNeverTrap() throws {
        for name in x264Fixtures {
            let units = ReferenceAnnexB.split(try TestFixtures.data("x264/\(name).264")).filter { [7, 8].contains($0.first! & 0x1F) }
            let sps = try SequenceParameterSet(nalUnit: try #require(units.first))
            for unit in units.map(Array.init) {
                var variants: [[UInt8]] = (1..<unit.count).map { Array(unit.prefix($0)) }
                for bit in 8..<unit.count * 8 {
                    var flipped = unit
                    flipped[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                    variants.append(flipped)
                }
                for variant in variants {
                    if unit[0] & 0x1F == 7 {
                        _ = try? SequenceParameterSet(nalUnit: variant)
                        _ = try? SequenceParameterSet.syntaxElements(nalUnit: variant)
                    } else {
                        _ = try? PictureParameterSet(nalUnit: variant, sequenceParameterSets: [sps.seqParameterSetId: sps])
                    }
                }
            }
        }
    }
}
