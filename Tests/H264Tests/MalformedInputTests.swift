import H264
import H264TestSupport
import Testing

/// The catalogue of malformed input: every case names what is wrong, and asserts the exact
/// ``MediaError/Code`` and the field (syntax element, spec name) the error reports. Byte vectors
/// are built here by hand from the syntax of ITU-T H.264 clause 7.3 (parameter sets, slice
/// header), ISO/IEC 14496-15 clause 5.3 (AVCC lengths, `avcC`) and Annex B (start codes).
@Suite(.ownThread) struct MalformedInputTests {
    typealias Case = MalformedCase

    @Test(arguments: Self.cases)
    func rejected(_ c: Case) {
        c.expectRejected()
    }

    /// Regression: a start code with nothing after it is a start code, not garbage (it used to
    /// be reported as `missingStartCode` with its own `01` byte as the offending byte).
    @Test(arguments: [[0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1]] as [[UInt8]])
    func aLoneStartCodeIsNotGarbage(bytes: [UInt8]) throws {
        #expect(try AnnexB.nalUnits(validating: bytes).isEmpty)
    }

    /// The builders' defaults are valid, so each case differs from accepted input only in what it names.
    @Test func buildersMakeValidInputByDefault() throws {
        let sps = try SequenceParameterSet(nalUnit: SPS().nalUnit)
        #expect(sps.codedWidth == 176 && sps.codedHeight == 144)
        #expect(try SequenceParameterSet(nalUnit: SPS(profileIdc: 100, firstDeltaScale: -8).nalUnit).seqScalingMatrixPresentFlag)
        #expect(try SequenceParameterSet(nalUnit: SPS(picOrderCntType: 1, pocCycle: 255).nalUnit).numRefFramesInPicOrderCntCycle == 255)
        #expect(try SequenceParameterSet(nalUnit: SPS(crop: (40, 47, 10, 61)).nalUnit).displayWidth == 2)
        #expect(try SequenceParameterSet(nalUnit: SPS(vui: { w in
            w.bit(false); w.bit(false); w.bit(false); w.bit(true); w.ue(5); w.ue(5)
            w.bit(false); w.bit(false); w.bit(false); w.bit(false); w.bit(false)
        }).nalUnit).vuiParametersPresentFlag)
        let pps = try PictureParameterSet(nalUnit: PPS(picInitQpMinus26: 25, chromaQpIndexOffset: 12).nalUnit, sequenceParameterSets: [0: sps])
        #expect(pps.picInitQpMinus26 == 25 && pps.chromaQpIndexOffset == 12)
        #expect(try PictureParameterSet(nalUnit: PPS(transform8x8WithScalingMatrix: true).nalUnit, sequenceParameterSets: [0: sps]).transform8x8ModeFlag)
        let record = try AVCDecoderConfigurationRecord(parsing: Self.avcC())
        #expect(record.sequenceParameterSets == [SPS().nalUnit] && record.nalUnitLengthSize == 4)
        _ = try SliceHeader(nalUnit: SyntheticStream.slice(idr: true), parameterSets: try Self.cache())
    }

    @Test func theCatalogueHasItsForty() {
        #expect(Self.cases.count >= 40)
        #expect(Set(Self.cases.map(\.name)).count == Self.cases.count, "case names are unique")
    }

    static let cases: [Case] = framing + expGolomb + sequenceParameterSets + pictureParameterSets + slices + configurationRecords + audio

    // MARK: NAL units, Annex-B, AVCC

    static let framing: [Case] = [
        Case("NAL unit header: no byte at all", .emptyNALUnit, field: "nal_unit_header") {
            _ = try NALUnitHeader(validating: [UInt8]())
        },
        Case("NAL unit header: forbidden_zero_bit set (0xE5)", .forbiddenZeroBit, field: "forbidden_zero_bit") {
            _ = try NALUnitHeader(validating: [0xE5, 0x88])
        },
        Case("SPS with forbidden_zero_bit set", .forbiddenZeroBit, field: "forbidden_zero_bit") {
            var sps = SPS().nalUnit
            sps[0] |= 0x80
            _ = try SequenceParameterSet(nalUnit: sps)
        },
        Case("Annex-B: garbage before the first start code", .missingStartCode, field: "start_code_prefix_one_3bytes") {
            _ = try AnnexB.nalUnits(validating: [0x47, 0x00, 0x00, 0x01, 0x09, 0xF0])
        },
        Case("Annex-B: no start code at all", .missingStartCode, field: "start_code_prefix_one_3bytes") {
            _ = try AnnexB.nalUnits(validating: [0x67, 0x42, 0x00, 0x1E])
        },
        Case("Annex-B extradata that is only a start code at the very end", .missingStartCode, field: "extradata") {
            _ = try AVCDecoderConfigurationRecord(extradata: [0x00, 0x00, 0x00, 0x01])
        },
        Case("Annex-B → AVCC: a non-zero byte before the first start code", .missingStartCode, field: "start_code_prefix_one_3bytes") {
            _ = try AVCC.fromAnnexB([0x01, 0x00, 0x00, 0x01, 0x65, 0x88])
        },
        Case("Annex-B → AVCC: a 300-byte NAL unit with 1-byte lengths", .valueOutOfRange, field: "NALUnitLength") {
            _ = try AVCC.fromAnnexB([0, 0, 0, 1, 0x65] + [UInt8](repeating: 0x11, count: 299), lengthSize: 1)
        },
        Case("AVCC: length past the end (5 announced, 2 follow)", .lengthPastEnd, field: "NALUnitLength") {
            _ = try AVCC.nalUnits(in: [0, 0, 0, 5, 0x65, 0x88], lengthSize: 4)
        },
        Case("AVCC: second length past the end", .lengthPastEnd, field: "NALUnitLength") {
            _ = try AVCC.nalUnits(in: [0, 2, 0x65, 0x88, 0xFF, 0xFF, 0x41], lengthSize: 2)
        },
        Case("AVCC: length field cut short (2 of 4 bytes)", .truncated, field: "NALUnitLength") {
            _ = try AVCC.nalUnits(in: [0, 0, 0, 1, 0x09, 0x00, 0x00], lengthSize: 4)
        },
        Case("AVCC: zero-length NAL unit", .emptyNALUnit, field: "NALUnitLength") {
            _ = try AVCC.nalUnits(in: [0, 0, 0, 0, 0, 0, 0, 1, 0x09], lengthSize: 4)
        },
        Case("AVCC: length size 3", .invalidLengthSize, field: "lengthSizeMinusOne") {
            _ = try AVCC.nalUnits(in: [0, 0, 1, 0x09], lengthSize: 3)
        },
        Case("AVCC: length size 0", .invalidLengthSize, field: "lengthSizeMinusOne") {
            _ = try AVCC.nalUnits(in: [0x09], lengthSize: 0)
        },
        Case("AVCC → Annex-B: length past the end of the sample", .lengthPastEnd, field: "NALUnitLength") {
            _ = try AnnexB.fromAVCC([0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0, 9, 0x65], lengthSize: 4)
        },
        Case("AVCC → Annex-B in place: zero-length NAL unit", .emptyNALUnit, field: "NALUnitLength") {
            var bytes: [UInt8] = [0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0, 0]
            try AnnexB.convertAVCCInPlace(&bytes)
        },
        Case("AVCC writer: an empty NAL unit", .emptyNALUnit, field: "NALUnitLength") {
            var out: [UInt8] = []
            try AVCC.append(nalUnit: [UInt8](), lengthSize: 4, to: &out)
        },
        Case("parameter-set cache: a slice is not a parameter set", .unexpectedNALUnitType, field: "nal_unit_type") {
            var cache = ParameterSetCache()
            try cache.store(SyntheticStream.slice(idr: true))
        },
    ]

    // MARK: Exp-Golomb

    static let expGolomb: [Case] = [
        Case("Exp-Golomb with 32 leading zeros", .expGolombOverflow, field: "codeNum") {
            var reader = BitReader([0x00, 0x00, 0x00, 0x00, 0x80])
            _ = try reader.readUE("codeNum")
        },
        Case("Exp-Golomb with 40 leading zeros in seq_parameter_set_id", .expGolombOverflow, field: "seq_parameter_set_id") {
            _ = try SequenceParameterSet(nalUnit: SPS(idBits: { $0.bits(0, 40); $0.bits(1, 1) }).nalUnit)
        },
        Case("Exp-Golomb running past the end", .truncated, field: "codeNum") {
            var reader = BitReader([0x00, 0x01])
            _ = try reader.readUE("codeNum")
        },
    ]

    // MARK: Sequence parameter sets (clause 7.3.2.1.1, ranges of 7.4.2.1.1)

    static let sequenceParameterSets: [Case] = [
        Case("SPS: empty NAL unit", .emptyNALUnit, field: "nal_unit_header") {
            _ = try SequenceParameterSet(nalUnit: [UInt8]())
        },
        Case("SPS: a PPS NAL unit given as SPS", .unexpectedNALUnitType, field: "nal_unit_type") {
            _ = try SequenceParameterSet(nalUnit: SyntheticStream.pps())
        },
        Case("SPS: cut after level_idc", .truncated, field: "seq_parameter_set_id") {
            _ = try SequenceParameterSet(nalUnit: Array(SPS().nalUnit.prefix(4)))
        },
        Case("SPS: seq_parameter_set_id 32", .valueOutOfRange, field: "seq_parameter_set_id") {
            _ = try SequenceParameterSet(nalUnit: SPS(id: 32).nalUnit)
        },
        Case("SPS: chroma_format_idc 4", .valueOutOfRange, field: "chroma_format_idc") {
            _ = try SequenceParameterSet(nalUnit: SPS(profileIdc: 100, chromaFormatIdc: 4).nalUnit)
        },
        Case("SPS: bit_depth_luma_minus8 7", .valueOutOfRange, field: "bit_depth_luma_minus8") {
            _ = try SequenceParameterSet(nalUnit: SPS(profileIdc: 100, bitDepthLumaMinus8: 7).nalUnit)
        },
        Case("SPS: scaling list delta_scale -129", .valueOutOfRange, field: "delta_scale[0]") {
            _ = try SequenceParameterSet(nalUnit: SPS(profileIdc: 100, firstDeltaScale: -129).nalUnit)
        },
        Case("SPS: log2_max_frame_num_minus4 13", .valueOutOfRange, field: "log2_max_frame_num_minus4") {
            _ = try SequenceParameterSet(nalUnit: SPS(log2MaxFrameNumMinus4: 13).nalUnit)
        },
        Case("SPS: pic_order_cnt_type 3", .valueOutOfRange, field: "pic_order_cnt_type") {
            _ = try SequenceParameterSet(nalUnit: SPS(picOrderCntType: 3).nalUnit)
        },
        Case("SPS: log2_max_pic_order_cnt_lsb_minus4 13", .valueOutOfRange, field: "log2_max_pic_order_cnt_lsb_minus4") {
            _ = try SequenceParameterSet(nalUnit: SPS(log2MaxPicOrderCntLsbMinus4: 13).nalUnit)
        },
        Case("SPS: 256 ref frames in the POC cycle", .valueOutOfRange, field: "num_ref_frames_in_pic_order_cnt_cycle") {
            _ = try SequenceParameterSet(nalUnit: SPS(picOrderCntType: 1, pocCycle: 256).nalUnit)
        },
        Case("SPS: POC cycle of 200 announced, 3 present", .truncated, field: "offset_for_ref_frame[3]") {
            _ = try SequenceParameterSet(nalUnit: SPS(picOrderCntType: 1, pocCycle: 200, pocCycleWritten: 3, stopAfterPOC: true).nalUnit)
        },
        Case("SPS: max_num_ref_frames 17", .valueOutOfRange, field: "max_num_ref_frames") {
            _ = try SequenceParameterSet(nalUnit: SPS(maxNumRefFrames: 17).nalUnit)
        },
        Case("SPS: a width of 2^27 macroblocks overflows", .overflow, field: "pic_width_in_mbs_minus1") {
            _ = try SequenceParameterSet(nalUnit: SPS(picWidthInMbsMinus1: 1 << 27).nalUnit)
        },
        Case("SPS: a macroblock count that overflows (2^31 map units high)", .overflow, field: "pic_height_in_map_units_minus1") {
            _ = try SequenceParameterSet(nalUnit: SPS(picWidthInMbsMinus1: (1 << 26) - 1, picHeightInMapUnitsMinus1: (1 << 31) - 1).nalUnit)
        },
        Case("SPS: crop left wider than the picture", .valueOutOfRange, field: "frame_crop_left_offset") {
            // 176 samples wide, CropUnitX 2 (4:2:0): at most 87.
            _ = try SequenceParameterSet(nalUnit: SPS(crop: (88, 0, 0, 0)).nalUnit)
        },
        Case("SPS: crop left + right larger than the picture", .valueOutOfRange, field: "frame_crop_right_offset") {
            _ = try SequenceParameterSet(nalUnit: SPS(crop: (40, 48, 0, 0)).nalUnit)
        },
        Case("SPS: crop bottom taller than the picture", .valueOutOfRange, field: "frame_crop_bottom_offset") {
            // 144 rows, CropUnitY 2: top + bottom at most 71.
            _ = try SequenceParameterSet(nalUnit: SPS(crop: (0, 0, 10, 62)).nalUnit)
        },
        Case("SPS: VUI cpb_cnt_minus1 32", .valueOutOfRange, field: "cpb_cnt_minus1") {
            // Unlike the tolerable VUI values (TolerableValueTests), the CPB count decides how
            // many entries follow: out of range is an error.
            _ = try SequenceParameterSet(nalUnit: SPS(vui: { w in
                w.bit(false); w.bit(false); w.bit(false); w.bit(false); w.bit(false) // … timing_info_present_flag
                w.bit(true); w.ue(32)                  // nal_hrd_parameters_present_flag, cpb_cnt_minus1
            }).nalUnit)
        },
        Case("SPS: rbsp_stop_one_bit missing", .invalidTrailingBits, field: "rbsp_stop_one_bit") {
            _ = try SequenceParameterSet(nalUnit: SPS(missingStopBit: true).nalUnit)
        },
    ]

    // MARK: Picture parameter sets (clause 7.3.2.2)

    static let pictureParameterSets: [Case] = [
        Case("PPS: pic_parameter_set_id 256", .valueOutOfRange, field: "pic_parameter_set_id") {
            _ = try PictureParameterSet(nalUnit: PPS(id: 256).nalUnit)
        },
        Case("PPS: seq_parameter_set_id 32", .valueOutOfRange, field: "seq_parameter_set_id") {
            _ = try PictureParameterSet(nalUnit: PPS(spsId: 32).nalUnit)
        },
        Case("PPS naming a missing SPS", .missingParameterSet, field: "seq_parameter_set_id") {
            var cache = ParameterSetCache()
            try cache.store(SPS(id: 0).nalUnit)
            try cache.store(PPS(spsId: 5).nalUnit)
        },
        Case("PPS with 8x8 scaling lists and no SPS to count them", .missingParameterSet, field: "seq_parameter_set_id") {
            _ = try PictureParameterSet(nalUnit: PPS(transform8x8WithScalingMatrix: true).nalUnit)
        },
        Case("PPS: num_slice_groups_minus1 8", .valueOutOfRange, field: "num_slice_groups_minus1") {
            _ = try PictureParameterSet(nalUnit: PPS(numSliceGroupsMinus1: 8).nalUnit)
        },
        Case("PPS: slice_group_map_type 7", .valueOutOfRange, field: "slice_group_map_type") {
            _ = try PictureParameterSet(nalUnit: PPS(numSliceGroupsMinus1: 1, sliceGroupMapType: 7).nalUnit)
        },
        Case("PPS: num_ref_idx_l0_default_active_minus1 32", .valueOutOfRange, field: "num_ref_idx_l0_default_active_minus1") {
            _ = try PictureParameterSet(nalUnit: PPS(numRefIdxL0Minus1: 32).nalUnit)
        },
        Case("PPS: weighted_bipred_idc 3", .valueOutOfRange, field: "weighted_bipred_idc") {
            _ = try PictureParameterSet(nalUnit: PPS(weightedBipredIdc: 3).nalUnit)
        },
        Case("PPS: pic_init_qp_minus26 26", .valueOutOfRange, field: "pic_init_qp_minus26") {
            _ = try PictureParameterSet(nalUnit: PPS(picInitQpMinus26: 26).nalUnit)
        },
        Case("PPS: pic_init_qp_minus26 -27 for 8-bit video", .valueOutOfRange, field: "pic_init_qp_minus26") {
            let sps = try SequenceParameterSet(nalUnit: SPS().nalUnit)
            _ = try PictureParameterSet(nalUnit: PPS(picInitQpMinus26: -27).nalUnit, sequenceParameterSets: [0: sps])
        },
        Case("PPS: chroma_qp_index_offset 13", .valueOutOfRange, field: "chroma_qp_index_offset") {
            _ = try PictureParameterSet(nalUnit: PPS(chromaQpIndexOffset: 13).nalUnit)
        },
        Case("PPS: cut inside num_slice_groups_minus1", .truncated, field: "num_slice_groups_minus1") {
            var w = BitWriter()
            w.ue(0); w.ue(0)
            _ = try PictureParameterSet(nalUnit: [0x68] + w.bytes.prefix(1))
        },
    ]

    // MARK: Slice headers (clause 7.3.3)

    static let slices: [Case] = [
        Case("slice naming a PPS that was never sent", .missingParameterSet, field: "pic_parameter_set_id") {
            let cache = try Self.cache()
            _ = try SliceHeader(nalUnit: SyntheticStream.slice(idr: true, ppsId: 9), parameterSets: cache)
        },
        Case("slice_type 10", .valueOutOfRange, field: "slice_type") {
            var w = BitWriter()
            w.ue(0); w.ue(10); w.ue(0); w.trailingBits()
            _ = try SliceHeader(nalUnit: w.nalUnit(type: 5), parameterSets: try Self.cache())
        },
        Case("first_mb_in_slice beyond any level's frame size", .valueOutOfRange, field: "first_mb_in_slice") {
            var w = BitWriter()
            w.ue(139_265); w.ue(7); w.ue(0); w.trailingBits()
            _ = try SliceHeader(nalUnit: w.nalUnit(type: 1), parameterSets: try Self.cache())
        },
        Case("slice of only a header byte", .truncated, field: "first_mb_in_slice") {
            _ = try SliceHeader(nalUnit: [0x65], parameterSets: try Self.cache())
        },
        Case("slice header asked of an SPS", .unexpectedNALUnitType, field: "nal_unit_type") {
            _ = try SliceHeader(nalUnit: SPS().nalUnit, parameterSets: try Self.cache())
        },
    ]

    // MARK: avcC (ISO/IEC 14496-15 clause 5.3.3.1)

    /// A valid avcC for `SPS()`/`SyntheticStream.pps()`, built field by field.
    static func avcC(version: UInt8 = 1, lengthSizeByte: UInt8 = 0xFF, spsCountByte: UInt8 = 0xE1) -> [UInt8] {
        let sps = SPS().nalUnit
        let pps = SyntheticStream.pps()
        return [version, sps[1], sps[2], sps[3], lengthSizeByte, spsCountByte, 0, UInt8(sps.count)] + sps
            + [1, 0, UInt8(pps.count)] + pps
    }

    static let configurationRecords: [Case] = [
        Case("avcC: configurationVersion 0", .invalidConfigurationRecord, field: "configurationVersion") {
            _ = try AVCDecoderConfigurationRecord(parsing: avcC(version: 0))
        },
        Case("avcC: lengthSizeMinusOne 2 (3-byte lengths)", .invalidLengthSize, field: "lengthSizeMinusOne") {
            _ = try AVCDecoderConfigurationRecord(parsing: avcC(lengthSizeByte: 0xFE))
        },
        Case("avcC: empty", .truncated, field: "configurationVersion") {
            _ = try AVCDecoderConfigurationRecord(parsing: [UInt8]())
        },
        Case("avcC: 3 SPS announced, 1 present", .truncated, field: "sequenceParameterSetLength[1]") {
            _ = try AVCDecoderConfigurationRecord(parsing: avcC(spsCountByte: 0xE3).prefix(8 + SPS().nalUnit.count))
        },
        Case("avcC: PPS length past the end", .truncated, field: "pictureParameterSetNALUnit[0]") {
            _ = try AVCDecoderConfigurationRecord(parsing: avcC().dropLast(2))
        },
        Case("avcC: PPS count past the end", .truncated, field: "numOfPictureParameterSets") {
            _ = try AVCDecoderConfigurationRecord(parsing: avcC().prefix(8 + SPS().nalUnit.count))
        },
        Case("avcC: zero-length SPS", .emptyNALUnit, field: "sequenceParameterSetLength[0]") {
            _ = try AVCDecoderConfigurationRecord(parsing: [1, 66, 0xC0, 30, 0xFF, 0xE1, 0, 0, 0])
        },
        Case("extradata: empty", .truncated, field: "extradata") {
            _ = try AVCDecoderConfigurationRecord(extradata: [])
        },
        Case("extradata: neither avcC nor Annex-B", .missingStartCode, field: "start_code_prefix_one_3bytes") {
            _ = try AVCDecoderConfigurationRecord(extradata: [0x17, 0x00, 0x00, 0x01, 0x67])
        },
        Case("configuration record with 3-byte lengths", .invalidLengthSize, field: "lengthSizeMinusOne") {
            _ = try AVCDecoderConfigurationRecord(avcProfileIndication: 66, profileCompatibility: 0, avcLevelIndication: 30,
                                                  nalUnitLengthSize: 3, sequenceParameterSets: [SPS().nalUnit],
                                                  pictureParameterSets: [SyntheticStream.pps()])
        },
        Case("configuration record with 32 SPS cannot be written", .valueOutOfRange, field: "numOfSequenceParameterSets") {
            let record = try AVCDecoderConfigurationRecord(avcProfileIndication: 66, profileCompatibility: 0, avcLevelIndication: 30,
                                                           sequenceParameterSets: (0..<32).map { SPS(id: $0).nalUnit },
                                                           pictureParameterSets: [SyntheticStream.pps()])
            _ = try record.serialized()
        },
    ]

    static func cache() throws(MediaError) -> ParameterSetCache {
        var cache = ParameterSetCache()
        try cache.store(SyntheticStream.sps(widthInMbs: 11, heightInMbs: 9))
        try cache.store(SyntheticStream.pps())
        return cache
    }
}
