public import MediaCore
/// A sequence parameter set, `seq_parameter_set_rbsp()` (clause 7.3.2.1.1, semantics 7.4.2.1.1).
///
/// Parsed from a whole NAL unit of type 7. Every element is read in clause 7.3 order and
/// range-checked as it is read; stored properties carry the spec's names. Values absent from
/// the bitstream hold what the semantics infer (e.g. ``chromaFormatIdc`` is 1 when absent).
/// Derived values (``codedWidth``, ``cropRect``, ``frameRate`` …) are computed properties.
public struct SequenceParameterSet: Hashable, Sendable {
    /// `profile_idc` (Annex A).
    public let profileIdc: Int
    /// `constraint_set0_flag`.
    public let constraintSet0Flag: Bool
    /// `constraint_set1_flag` (with Baseline: Constrained Baseline).
    public let constraintSet1Flag: Bool
    /// `constraint_set2_flag`.
    public let constraintSet2Flag: Bool
    /// `constraint_set3_flag` (level 1b in Baseline/Main/Extended at `level_idc` 11; Intra profiles).
    public let constraintSet3Flag: Bool
    /// `constraint_set4_flag`.
    public let constraintSet4Flag: Bool
    /// `constraint_set5_flag`.
    public let constraintSet5Flag: Bool
    /// `reserved_zero_2bits` (decoders ignore its value; a non-zero value is kept with a warning).
    public let reservedZero2Bits: Int
    /// `level_idc` (Table A-1): ten times the level number, 9 for level 1b (a value not in the
    /// table is kept with a warning).
    public let levelIdc: Int
    /// `seq_parameter_set_id`, 0…31.
    public let seqParameterSetId: Int
    /// `chroma_format_idc`, 0…3 (Table 6-1); 1 (4:2:0) when absent.
    public let chromaFormatIdc: Int
    /// `separate_colour_plane_flag`; false when absent.
    public let separateColourPlaneFlag: Bool
    /// `bit_depth_luma_minus8`, 0…6; 0 when absent.
    public let bitDepthLumaMinus8: Int
    /// `bit_depth_chroma_minus8`, 0…6; 0 when absent.
    public let bitDepthChromaMinus8: Int
    /// `qpprime_y_zero_transform_bypass_flag`; false when absent.
    public let qpprimeYZeroTransformBypassFlag: Bool
    /// `seq_scaling_matrix_present_flag`; false when absent.
    public let seqScalingMatrixPresentFlag: Bool
    /// The coded sequence scaling lists, index 0…7 (or 0…11 when `chroma_format_idc` is 3):
    /// nil where `seq_scaling_list_present_flag[i]` is 0; empty without a scaling matrix.
    public let seqScalingLists: [ScalingList?]
    /// `log2_max_frame_num_minus4`, 0…12.
    public let log2MaxFrameNumMinus4: Int
    /// `pic_order_cnt_type`, 0…2.
    public let picOrderCntType: Int
    /// `log2_max_pic_order_cnt_lsb_minus4`, 0…12 (`pic_order_cnt_type` 0); 0 otherwise.
    public let log2MaxPicOrderCntLsbMinus4: Int
    /// `delta_pic_order_always_zero_flag` (`pic_order_cnt_type` 1); false otherwise.
    public let deltaPicOrderAlwaysZeroFlag: Bool
    /// `offset_for_non_ref_pic` (`pic_order_cnt_type` 1), −2^31+1…2^31−1; 0 otherwise.
    public let offsetForNonRefPic: Int
    /// `offset_for_top_to_bottom_field` (`pic_order_cnt_type` 1); 0 otherwise.
    public let offsetForTopToBottomField: Int
    /// `offset_for_ref_frame[i]`: `num_ref_frames_in_pic_order_cnt_cycle` (≤ 255) values.
    public let offsetForRefFrame: [Int]
    /// `max_num_ref_frames`, 0…16.
    public let maxNumRefFrames: Int
    /// `gaps_in_frame_num_value_allowed_flag`.
    public let gapsInFrameNumValueAllowedFlag: Bool
    /// `pic_width_in_mbs_minus1`.
    public let picWidthInMbsMinus1: Int
    /// `pic_height_in_map_units_minus1`.
    public let picHeightInMapUnitsMinus1: Int
    /// `frame_mbs_only_flag`: no field pictures or MBAFF.
    public let frameMbsOnlyFlag: Bool
    /// `mb_adaptive_frame_field_flag`; false when absent.
    public let mbAdaptiveFrameFieldFlag: Bool
    /// `direct_8x8_inference_flag`.
    public let direct8x8InferenceFlag: Bool
    /// `frame_cropping_flag`.
    public let frameCroppingFlag: Bool
    /// `frame_crop_left_offset`, in crop units (``cropUnitX``); 0 when absent.
    public let frameCropLeftOffset: Int
    /// `frame_crop_right_offset`, in crop units (``cropUnitX``); 0 when absent.
    public let frameCropRightOffset: Int
    /// `frame_crop_top_offset`, in crop units (``cropUnitY``); 0 when absent.
    public let frameCropTopOffset: Int
    /// `frame_crop_bottom_offset`, in crop units (``cropUnitY``); 0 when absent.
    public let frameCropBottomOffset: Int
    /// `vui_parameters_present_flag`.
    public var vuiParametersPresentFlag: Bool { vuiParameters != nil }
    /// The VUI (Annex E), when `vui_parameters_present_flag` is 1.
    public let vuiParameters: VUIParameters?
    /// Tolerable problems met while parsing, in bitstream order: values out of range in elements
    /// that do not change how the rest is read (reserved bits, `level_idc`, the VUI's colour
    /// description, timing and bitstream restriction, HRD rate order). Each is an `MediaError`
    /// with the code, field and bit offset an error would have; the value is kept.
    public let diagnostics: [MediaError]

    /// Parses a sequence parameter set NAL unit.
    ///
    /// - Parameter nalUnit: the whole NAL unit, header byte included, emulation prevention
    ///   bytes still present.
    /// - Throws: `MediaError` — `MediaError.Code.emptyNALUnit`, `MediaError.Code.forbiddenZeroBit`,
    ///   `MediaError.Code.unexpectedNALUnitType` (not type 7), `MediaError.Code.truncated`,
    ///   `MediaError.Code.expGolombOverflow`, `MediaError.Code.valueOutOfRange` (a value outside
    ///   its range, or a crop window outside the picture), `MediaError.Code.overflow` (a picture
    ///   size that overflows), `MediaError.Code.invalidTrailingBits`. The error's `field` names
    ///   the element and `bitOffset` counts from the first bit of the header byte.
    public init(nalUnit: some Collection<UInt8>) throws(MediaError) {
        var reader = BitReader(try RBSP.decodeNALUnit(nalUnit))
        try self.init(reader: &reader)
    }

    /// Every syntax element of a sequence parameter set NAL unit in bitstream order, starting with
    /// the header's `forbidden_zero_bit`, `nal_ref_idc` and `nal_unit_type` and ending with the
    /// RBSP trailing bits — FFmpeg's `trace_headers` names (see `SyntaxElement`).
    ///
    /// - Throws: the errors of ``init(nalUnit:)``.
    public static func syntaxElements(nalUnit: some Collection<UInt8>) throws(MediaError) -> [SyntaxElement] {
        var reader = BitReader(try RBSP.decodeNALUnit(nalUnit), recordsElements: true)
        _ = try SequenceParameterSet(reader: &reader)
        return reader.syntaxElements
    }

    /// The profiles whose SPS carries `chroma_format_idc` and the fields after it (clause 7.3.2.1.1).
    package static let highProfileIdcs: Set<Int> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    private init(reader: inout BitReader) throws(MediaError) {
        try reader.readNALUnitHeader(expecting: .sequenceParameterSet)
        profileIdc = try reader.readBits(8, "profile_idc")
        constraintSet0Flag = try reader.readFlag("constraint_set0_flag")
        constraintSet1Flag = try reader.readFlag("constraint_set1_flag")
        constraintSet2Flag = try reader.readFlag("constraint_set2_flag")
        constraintSet3Flag = try reader.readFlag("constraint_set3_flag")
        constraintSet4Flag = try reader.readFlag("constraint_set4_flag")
        constraintSet5Flag = try reader.readFlag("constraint_set5_flag")
        reservedZero2Bits = try reader.readBits(2, "reserved_zero_2bits", tolerating: { $0 == 0 }, "0")
        let levelAt = reader.bitOffset
        levelIdc = try reader.readBits(8, "level_idc", tolerating: { Self.maxFrameSizes[$0] != nil }, "a level_idc of Table A-1")
        seqParameterSetId = try reader.readUE("seq_parameter_set_id", max: 31)

        if Self.highProfileIdcs.contains(profileIdc) {
            chromaFormatIdc = try reader.readUE("chroma_format_idc", max: 3)
            separateColourPlaneFlag = chromaFormatIdc == 3 ? try reader.readFlag("separate_colour_plane_flag") : false
            bitDepthLumaMinus8 = try reader.readUE("bit_depth_luma_minus8", max: 6)
            bitDepthChromaMinus8 = try reader.readUE("bit_depth_chroma_minus8", max: 6)
            qpprimeYZeroTransformBypassFlag = try reader.readFlag("qpprime_y_zero_transform_bypass_flag")
            seqScalingMatrixPresentFlag = try reader.readFlag("seq_scaling_matrix_present_flag")
            if seqScalingMatrixPresentFlag {
                seqScalingLists = try ScalingList.readLists(from: &reader, count: chromaFormatIdc != 3 ? 8 : 12,
                                                            flagName: "seq_scaling_list_present_flag")
            } else {
                seqScalingLists = []
            }
        } else {
            chromaFormatIdc = 1
            separateColourPlaneFlag = false
            bitDepthLumaMinus8 = 0
            bitDepthChromaMinus8 = 0
            qpprimeYZeroTransformBypassFlag = false
            seqScalingMatrixPresentFlag = false
            seqScalingLists = []
        }

        log2MaxFrameNumMinus4 = try reader.readUE("log2_max_frame_num_minus4", max: 12)
        picOrderCntType = try reader.readUE("pic_order_cnt_type", max: 2)
        var lsb = 0, alwaysZero = false, nonRef = 0, topToBottom = 0, refFrame: [Int] = []
        if picOrderCntType == 0 {
            lsb = try reader.readUE("log2_max_pic_order_cnt_lsb_minus4", max: 12)
        } else if picOrderCntType == 1 {
            alwaysZero = try reader.readFlag("delta_pic_order_always_zero_flag")
            nonRef = try reader.readSE("offset_for_non_ref_pic")
            topToBottom = try reader.readSE("offset_for_top_to_bottom_field")
            let cycle = try reader.readUE("num_ref_frames_in_pic_order_cnt_cycle", max: 255)
            refFrame.reserveCapacity(cycle)
            for i in 0..<cycle {
                refFrame.append(try reader.readSE("offset_for_ref_frame[\(i)]"))
            }
        }
        log2MaxPicOrderCntLsbMinus4 = lsb
        deltaPicOrderAlwaysZeroFlag = alwaysZero
        offsetForNonRefPic = nonRef
        offsetForTopToBottomField = topToBottom
        offsetForRefFrame = refFrame

        maxNumRefFrames = try reader.readUE("max_num_ref_frames", max: 16)
        gapsInFrameNumValueAllowedFlag = try reader.readFlag("gaps_in_frame_num_allowed_flag")
        let widthAt = reader.bitOffset
        picWidthInMbsMinus1 = try reader.readUE("pic_width_in_mbs_minus1")
        let heightAt = reader.bitOffset
        picHeightInMapUnitsMinus1 = try reader.readUE("pic_height_in_map_units_minus1")
        frameMbsOnlyFlag = try reader.readFlag("frame_mbs_only_flag")
        mbAdaptiveFrameFieldFlag = frameMbsOnlyFlag ? false : try reader.readFlag("mb_adaptive_frame_field_flag")

        // Picture size in samples (7-13 … 7-18), checked once here so that the computed
        // properties below cannot overflow.
        let widthInMbs = picWidthInMbsMinus1 + 1
        let heightInMbs = (picHeightInMapUnitsMinus1 + 1) * (frameMbsOnlyFlag ? 1 : 2)
        let (widthSamples, o1) = widthInMbs.multipliedReportingOverflow(by: 16)
        let (heightSamples, o2) = heightInMbs.multipliedReportingOverflow(by: 16)
        let (mbs, o3) = widthInMbs.multipliedReportingOverflow(by: heightInMbs)
        let (_, o4) = mbs.multipliedReportingOverflow(by: 256)
        if o1 || widthSamples > Int(Int32.max) {
            throw MediaError(.overflow, field: "pic_width_in_mbs_minus1", bitOffset: widthAt, "picture width of \(widthInMbs) macroblocks overflows")
        }
        if o2 || o3 || o4 || heightSamples > Int(Int32.max) {
            throw MediaError(.overflow, field: "pic_height_in_map_units_minus1", bitOffset: heightAt,
                            "picture of \(widthInMbs) x \(heightInMbs) macroblocks overflows")
        }

        // Level limit (Table A-1, MaxFS): decoders read on past a picture too large for its level.
        if let maxFS = Self.maxFrameSizes[levelIdc], mbs > maxFS {
            reader.warn(.valueOutOfRange, "level_idc", at: levelAt,
                        "a frame of \(mbs) macroblocks exceeds MaxFS \(maxFS) of level_idc \(levelIdc) (kept)")
        }

        direct8x8InferenceFlag = try reader.readFlag("direct_8x8_inference_flag")
        frameCroppingFlag = try reader.readFlag("frame_cropping_flag")
        if frameCroppingFlag {
            let chromaArrayType = separateColourPlaneFlag ? 0 : chromaFormatIdc
            let unitX = Self.cropUnitX(chromaArrayType: chromaArrayType)
            let unitY = Self.cropUnitY(chromaArrayType: chromaArrayType, frameMbsOnlyFlag: frameMbsOnlyFlag)
            // Clause 7.4.2.1.1: left + right ≤ PicWidthInSamplesL / CropUnitX − 1, likewise vertically.
            frameCropLeftOffset = try reader.readUE("frame_crop_left_offset", max: widthSamples / unitX - 1)
            frameCropRightOffset = try reader.readUE("frame_crop_right_offset", max: widthSamples / unitX - 1 - frameCropLeftOffset)
            frameCropTopOffset = try reader.readUE("frame_crop_top_offset", max: heightSamples / unitY - 1)
            frameCropBottomOffset = try reader.readUE("frame_crop_bottom_offset", max: heightSamples / unitY - 1 - frameCropTopOffset)
        } else {
            frameCropLeftOffset = 0
            frameCropRightOffset = 0
            frameCropTopOffset = 0
            frameCropBottomOffset = 0
        }

        vuiParameters = try reader.readFlag("vui_parameters_present_flag") ? try VUIParameters(reader: &reader) : nil
        try reader.readTrailingBits()
        diagnostics = reader.diagnostics
    }

    /// `MaxFS` (frame size in macroblocks) of each `level_idc` of Table A-1 (9 is level 1b).
    package static let maxFrameSizes: [Int: Int] = [9: 99, 10: 99, 11: 396, 12: 396, 13: 396, 20: 396, 21: 792, 22: 1620, 30: 1620,
                                            31: 3600, 32: 5120, 40: 8192, 41: 8192, 42: 8704, 50: 22080, 51: 36864,
                                            52: 36864, 60: 139_264, 61: 139_264, 62: 139_264]

    package static func cropUnitX(chromaArrayType: Int) -> Int {
        chromaArrayType == 1 || chromaArrayType == 2 ? 2 : 1
    }

    package static func cropUnitY(chromaArrayType: Int, frameMbsOnlyFlag: Bool) -> Int {
        let fieldFactor = frameMbsOnlyFlag ? 1 : 2
        return chromaArrayType == 1 ? 2 * fieldFactor : fieldFactor
    }
}

// MARK: - Derived values (clause 7.4.2.1.1)

extension SequenceParameterSet {
    /// `ChromaArrayType`: 0 with separate colour planes (or 4:0:0), else `chroma_format_idc`.
    public var chromaArrayType: Int { separateColourPlaneFlag ? 0 : chromaFormatIdc }
    /// `BitDepthY = 8 + bit_depth_luma_minus8` (7-3).
    public var bitDepthLuma: Int { 8 + bitDepthLumaMinus8 }
    /// `BitDepthC = 8 + bit_depth_chroma_minus8` (7-5).
    public var bitDepthChroma: Int { 8 + bitDepthChromaMinus8 }
    /// `MaxFrameNum = 2^(log2_max_frame_num_minus4 + 4)` (7-10).
    public var maxFrameNum: Int { 1 << (log2MaxFrameNumMinus4 + 4) }
    /// `MaxPicOrderCntLsb = 2^(log2_max_pic_order_cnt_lsb_minus4 + 4)` (7-11).
    public var maxPicOrderCntLsb: Int { 1 << (log2MaxPicOrderCntLsbMinus4 + 4) }
    /// `num_ref_frames_in_pic_order_cnt_cycle`.
    public var numRefFramesInPicOrderCntCycle: Int { offsetForRefFrame.count }
    /// `seq_scaling_list_present_flag[i]` for each coded list (empty without a scaling matrix).
    public var seqScalingListPresentFlag: [Bool] { seqScalingLists.map { $0 != nil } }

    /// The scaling lists in effect for the sequence: `Flat_4x4_16`/`Flat_8x8_16` without a
    /// scaling matrix, otherwise the coded lists with fall-back rule A of Table 7-2.
    public var scalingMatrix: ScalingMatrix {
        seqScalingMatrixPresentFlag ? ScalingMatrix.resolving(seqScalingLists, fallback: nil) : .flat
    }

    /// `PicWidthInMbs` (7-13).
    public var picWidthInMbs: Int { picWidthInMbsMinus1 + 1 }
    /// `PicHeightInMapUnits` (7-16).
    public var picHeightInMapUnits: Int { picHeightInMapUnitsMinus1 + 1 }
    /// `PicSizeInMapUnits` (7-17).
    public var picSizeInMapUnits: Int { picWidthInMbs * picHeightInMapUnits }
    /// `FrameHeightInMbs = (2 − frame_mbs_only_flag) × PicHeightInMapUnits` (7-18).
    public var frameHeightInMbs: Int { (frameMbsOnlyFlag ? 1 : 2) * picHeightInMapUnits }
    /// The number of macroblocks in a frame.
    public var frameSizeInMbs: Int { picWidthInMbs * frameHeightInMbs }
    /// The coded frame width in luma samples, `PicWidthInSamplesL` (7-14).
    public var codedWidth: Int { picWidthInMbs * 16 }
    /// The coded frame height in luma samples, `16 × FrameHeightInMbs`.
    public var codedHeight: Int { frameHeightInMbs * 16 }

    /// `CropUnitX` (7-19, 7-21): 1 for `ChromaArrayType` 0 or 3, else `SubWidthC` (2).
    public var cropUnitX: Int { Self.cropUnitX(chromaArrayType: chromaArrayType) }
    /// `CropUnitY` (7-20, 7-22): `SubHeightC × (2 − frame_mbs_only_flag)`, or
    /// `2 − frame_mbs_only_flag` for `ChromaArrayType` 0.
    public var cropUnitY: Int { Self.cropUnitY(chromaArrayType: chromaArrayType, frameMbsOnlyFlag: frameMbsOnlyFlag) }

    /// The displayed rectangle of the coded frame in luma samples (clause 7.4.2.1.1): from
    /// `CropUnitX × frame_crop_left_offset` to `PicWidthInSamplesL − CropUnitX × frame_crop_right_offset − 1`,
    /// likewise vertically. The whole frame without cropping.
    public var cropRect: (x: Int, y: Int, width: Int, height: Int) {
        let x = cropUnitX * frameCropLeftOffset
        let y = cropUnitY * frameCropTopOffset
        return (x, y, codedWidth - x - cropUnitX * frameCropRightOffset, codedHeight - y - cropUnitY * frameCropBottomOffset)
    }
    /// The display width in luma samples: the coded width less cropping.
    public var displayWidth: Int { cropRect.width }
    /// The display height in luma samples: the coded height less cropping.
    public var displayHeight: Int { cropRect.height }

    /// The frame rate from the VUI timing information, `time_scale / (2 × num_units_in_tick)`
    /// (one frame is two field ticks, clause E.2.1); nil without timing information or with a
    /// zero term.
    public var frameRate: Double? {
        guard let vui = vuiParameters, vui.timingInfoPresentFlag, vui.numUnitsInTick > 0, vui.timeScale > 0 else { return nil }
        return Double(vui.timeScale) / (2 * Double(vui.numUnitsInTick))
    }

    /// The profile's name (Annex A; the names FFmpeg reports), e.g. `"Constrained Baseline"`,
    /// `"High 10 Intra"`, `"High 4:4:4 Predictive"`.
    public var profileName: String {
        switch profileIdc {
        case 66: return constraintSet1Flag ? "Constrained Baseline" : "Baseline"
        case 77: return "Main"
        case 88: return "Extended"
        case 100: return "High"
        case 110: return constraintSet3Flag ? "High 10 Intra" : "High 10"
        case 122: return constraintSet3Flag ? "High 4:2:2 Intra" : "High 4:2:2"
        case 244: return constraintSet3Flag ? "High 4:4:4 Intra" : "High 4:4:4 Predictive"
        case 44: return "CAVLC 4:4:4 Intra"
        case 83: return "Scalable Baseline"
        case 86: return constraintSet3Flag ? "Scalable High Intra" : "Scalable High"
        case 118: return "Multiview High"
        case 128: return "Stereo High"
        case 134: return "MFC High"
        case 135: return "MFC Depth High"
        case 138: return "Multiview Depth High"
        case 139: return "Enhanced Multiview Depth High"
        default: return "Unknown (profile_idc \(profileIdc))"
        }
    }

    /// A level (Annex A, Table A-1).
    public struct Level: Hashable, Sendable, CustomStringConvertible {
        /// The `level_idc` as coded.
        public let levelIdc: Int
        /// True for level 1b: `level_idc` 11 with `constraint_set3_flag` in Baseline, Constrained
        /// Baseline, Main or Extended, or `level_idc` 9.
        public let isLevel1b: Bool

        /// Creates a level.
        public init(levelIdc: Int, isLevel1b: Bool = false) {
            self.levelIdc = levelIdc
            self.isLevel1b = isLevel1b || levelIdc == 9
        }

        /// The level number as written in Annex A: `"1b"`, `"1.1"`, `"3.0"`, `"5.1"`.
        public var description: String {
            isLevel1b ? "1b" : "\(levelIdc / 10).\(levelIdc % 10)"
        }
    }

    /// The level, with level 1b recognised (clause A.3.1 and A.3.2).
    public var level: Level {
        let oldProfile = profileIdc == 66 || profileIdc == 77 || profileIdc == 88
        return Level(levelIdc: levelIdc, isLevel1b: oldProfile && levelIdc == 11 && constraintSet3Flag)
    }
}
