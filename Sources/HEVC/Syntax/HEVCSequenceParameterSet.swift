public import MediaCore

/// A sequence parameter set, `seq_parameter_set_rbsp()` (ITU-T H.265 clause 7.3.2.2, semantics
/// 7.4.3.2).
///
/// Parsed from a whole NAL unit of type 33 with `nuh_layer_id` 0. Every element is read in
/// clause 7.3 order and range-checked as it is read; stored properties carry the spec's names.
/// Values absent from the bitstream hold what the semantics infer. Derived values
/// (``codedWidth``, ``displayWidth``, ``bitDepthLuma``, ``frameRate`` …) are computed properties.
/// The range extension is parsed; the multilayer, 3D, SCC and further extensions are skipped
/// by their flags.
public struct HEVCSequenceParameterSet: HEVCNALUnitSyntax, Hashable, Sendable {
    /// A long-term reference picture candidate the SPS lists (clause 7.4.3.2.1).
    public struct LongTermReferencePicture: Hashable, Sendable {
        /// `lt_ref_pic_poc_lsb_sps[i]`.
        public let pocLsb: Int
        /// `used_by_curr_pic_lt_sps_flag[i]`.
        public let usedByCurrPic: Bool
    }

    /// `sps_video_parameter_set_id`, 0…15.
    public let spsVideoParameterSetId: Int
    /// `sps_max_sub_layers_minus1`, 0…6.
    public let spsMaxSubLayersMinus1: Int
    /// `sps_temporal_id_nesting_flag`.
    public let spsTemporalIdNestingFlag: Bool
    /// `profile_tier_level(1, sps_max_sub_layers_minus1)`.
    public let profileTierLevel: HEVCProfileTierLevel
    /// `sps_seq_parameter_set_id`, 0…15.
    public let spsSeqParameterSetId: Int
    /// `chroma_format_idc`, 0…3 (0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4).
    public let chromaFormatIdc: Int
    /// `separate_colour_plane_flag`; false when absent.
    public let separateColourPlaneFlag: Bool
    /// `pic_width_in_luma_samples`: a multiple of the minimum coding block size.
    public let picWidthInLumaSamples: Int
    /// `pic_height_in_luma_samples`: a multiple of the minimum coding block size.
    public let picHeightInLumaSamples: Int
    /// The conformance window (`conf_win_*_offset`, in chroma units); ``HEVCWindow/none`` when
    /// `conformance_window_flag` is 0.
    public let conformanceWindow: HEVCWindow
    /// `bit_depth_luma_minus8`, 0…8.
    public let bitDepthLumaMinus8: Int
    /// `bit_depth_chroma_minus8`, 0…8.
    public let bitDepthChromaMinus8: Int
    /// `log2_max_pic_order_cnt_lsb_minus4`, 0…12.
    public let log2MaxPicOrderCntLsbMinus4: Int
    /// `sps_sub_layer_ordering_info_present_flag`.
    public let spsSubLayerOrderingInfoPresentFlag: Bool
    /// `sps_max_dec_pic_buffering_minus1[i]`, `sps_max_num_reorder_pics[i]` and
    /// `sps_max_latency_increase_plus1[i]` for each sub-layer 0…`sps_max_sub_layers_minus1`.
    public let subLayerOrdering: [HEVCSubLayerOrdering]
    /// `log2_min_luma_coding_block_size_minus3`, 0…3.
    public let log2MinLumaCodingBlockSizeMinus3: Int
    /// `log2_diff_max_min_luma_coding_block_size`, 0…3.
    public let log2DiffMaxMinLumaCodingBlockSize: Int
    /// `log2_min_luma_transform_block_size_minus2`.
    public let log2MinLumaTransformBlockSizeMinus2: Int
    /// `log2_diff_max_min_luma_transform_block_size`.
    public let log2DiffMaxMinLumaTransformBlockSize: Int
    /// `max_transform_hierarchy_depth_inter`.
    public let maxTransformHierarchyDepthInter: Int
    /// `max_transform_hierarchy_depth_intra`.
    public let maxTransformHierarchyDepthIntra: Int
    /// `scaling_list_enabled_flag`.
    public let scalingListEnabledFlag: Bool
    /// The coded scaling lists, when `sps_scaling_list_data_present_flag` is 1 (with
    /// `scaling_list_enabled_flag` and no lists, the default ones apply).
    public let scalingListData: HEVCScalingListData?
    /// `amp_enabled_flag`.
    public let ampEnabledFlag: Bool
    /// `sample_adaptive_offset_enabled_flag`.
    public let sampleAdaptiveOffsetEnabledFlag: Bool
    /// `pcm_enabled_flag`.
    public let pcmEnabledFlag: Bool
    /// The short-term reference picture sets, `st_ref_pic_set(0…num_short_term_ref_pic_sets−1)`
    /// (at most 64), resolved.
    public let shortTermRefPicSets: [HEVCShortTermReferencePictureSet]
    /// `long_term_ref_pics_present_flag`.
    public let longTermRefPicsPresentFlag: Bool
    /// `lt_ref_pic_poc_lsb_sps[i]` and `used_by_curr_pic_lt_sps_flag[i]`
    /// (`num_long_term_ref_pics_sps` ≤ 32 entries).
    public let longTermRefPicsSps: [LongTermReferencePicture]
    /// `sps_temporal_mvp_enabled_flag`.
    public let spsTemporalMvpEnabledFlag: Bool
    /// `strong_intra_smoothing_enabled_flag`.
    public let strongIntraSmoothingEnabledFlag: Bool
    /// The VUI (Annex E), when `vui_parameters_present_flag` is 1.
    public let vuiParameters: HEVCVUIParameters?
    /// `sps_range_extension_flag`, `sps_multilayer_extension_flag`, `sps_3d_extension_flag`,
    /// `sps_scc_extension_flag` and `sps_extension_4bits` as one value, first flag highest
    /// (bits 7…0); 0 when `sps_extension_present_flag` is 0.
    public let spsExtensionFlags: Int
    /// The values of `sps_range_extension()` (clause 7.3.2.2.2) in order, from
    /// `transform_skip_rotation_enabled_flag` to `cabac_bypass_alignment_enabled_flag`, when
    /// `sps_range_extension_flag` is 1.
    public let spsRangeExtensionFlags: [Bool]?
    /// Tolerable problems met while parsing, in bitstream order: values out of range in elements
    /// that do not change how the rest is read (reserved bits, the VUI, sub-layer ordering,
    /// scaling list coefficients). Each is an `MediaError` with the code, field and bit
    /// offset an error would have; the value is kept.
    public let diagnostics: [MediaError]

    /// Parses a sequence parameter set NAL unit.
    ///
    /// - Parameter nalUnit: the whole NAL unit, both header bytes included, emulation
    ///   prevention bytes still present.
    /// - Throws: `MediaError` with the element's name and bit offset (counted from the first
    ///   header bit): `emptyNALUnit`, `forbiddenZeroBit`, `unexpectedNALUnitType` (not 33),
    ///   `unsupported` (`nuh_layer_id` > 0), `truncated`, `expGolombOverflow`, `valueOutOfRange`
    ///   (also a size that is not a multiple of the minimum coding block, or a conformance window
    ///   outside the picture), `invalidTrailingBits`.
    public init(nalUnit: some Collection<UInt8>) throws(MediaError) { self = try Self.read(nalUnit: nalUnit) }

    /// Every syntax element of an SPS NAL unit in bitstream order, from the header's
    /// `forbidden_zero_bit` to the RBSP trailing bits, with FFmpeg's `trace_headers` names.
    ///
    /// - Throws: the errors of ``init(nalUnit:)``.
    public static func syntaxElements(nalUnit: some Collection<UInt8>) throws(MediaError) -> [SyntaxElement] { try elements(nalUnit: nalUnit) }

    init(reader: inout BitReader) throws(MediaError) {
        let header = try reader.readHEVCNALUnitHeader(expecting: .sequenceParameterSet)
        if header.nuhLayerId > 0 {
            throw MediaError(.unsupported, field: "nuh_layer_id", bitOffset: 7, "an SPS of layer \(header.nuhLayerId) (multi-layer)")
        }
        spsVideoParameterSetId = try reader.readBits(4, "sps_video_parameter_set_id")
        let subLayersAt = reader.bitOffset
        spsMaxSubLayersMinus1 = try reader.readBits(3, "sps_max_sub_layers_minus1")
        if spsMaxSubLayersMinus1 > 6 {
            throw MediaError(.valueOutOfRange, field: "sps_max_sub_layers_minus1", bitOffset: subLayersAt, "7 is outside 0...6")
        }
        spsTemporalIdNestingFlag = try reader.readFlag("sps_temporal_id_nesting_flag")
        profileTierLevel = try HEVCProfileTierLevel(reader: &reader, profilePresentFlag: true,
                                                     maxNumSubLayersMinus1: spsMaxSubLayersMinus1)
        spsSeqParameterSetId = try reader.readUE("sps_seq_parameter_set_id", max: 15)
        chromaFormatIdc = try reader.readUE("chroma_format_idc", max: 3)
        separateColourPlaneFlag = chromaFormatIdc == 3 ? try reader.readFlag("separate_colour_plane_flag") : false
        picWidthInLumaSamples = try reader.readUE("pic_width_in_luma_samples", range: 1...Self.maximumDimension)
        picHeightInLumaSamples = try reader.readUE("pic_height_in_luma_samples", range: 1...Self.maximumDimension)
        let windowAt = reader.bitOffset
        conformanceWindow = try reader.readFlag("conformance_window_flag")
            ? try HEVCWindow(reader: &reader, prefix: "conf_win", tolerating: 0...Self.maximumDimension) : .none
        bitDepthLumaMinus8 = try reader.readUE("bit_depth_luma_minus8", max: 8)
        bitDepthChromaMinus8 = try reader.readUE("bit_depth_chroma_minus8", max: 8)
        log2MaxPicOrderCntLsbMinus4 = try reader.readUE("log2_max_pic_order_cnt_lsb_minus4", max: 12)
        spsSubLayerOrderingInfoPresentFlag = try reader.readFlag("sps_sub_layer_ordering_info_present_flag")
        subLayerOrdering = try HEVCSubLayerOrdering.read(&reader, prefix: "sps", maxSubLayersMinus1: spsMaxSubLayersMinus1,
                                                         infoPresent: spsSubLayerOrderingInfoPresentFlag)
        log2MinLumaCodingBlockSizeMinus3 = try reader.readUE("log2_min_luma_coding_block_size_minus3", max: 3)
        log2DiffMaxMinLumaCodingBlockSize = try reader.readUE("log2_diff_max_min_luma_coding_block_size", max: 3)
        let minCbLog2 = log2MinLumaCodingBlockSizeMinus3 + 3
        let ctbLog2 = minCbLog2 + log2DiffMaxMinLumaCodingBlockSize
        if picWidthInLumaSamples % (1 << minCbLog2) != 0 || picHeightInLumaSamples % (1 << minCbLog2) != 0 {
            throw MediaError(.valueOutOfRange, field: "log2_min_luma_coding_block_size_minus3", bitOffset: reader.bitOffset,
                            "\(picWidthInLumaSamples)x\(picHeightInLumaSamples) is not a multiple of MinCbSizeY \(1 << minCbLog2)")
        }
        try Self.checkWindow(conformanceWindow, chromaFormatIdc: chromaFormatIdc, separateColourPlane: separateColourPlaneFlag,
                             width: picWidthInLumaSamples, height: picHeightInLumaSamples, at: windowAt)
        log2MinLumaTransformBlockSizeMinus2 = try reader.readUE("log2_min_luma_transform_block_size_minus2", max: minCbLog2 - 3)
        let minTbLog2 = log2MinLumaTransformBlockSizeMinus2 + 2
        log2DiffMaxMinLumaTransformBlockSize = try reader.readUE("log2_diff_max_min_luma_transform_block_size",
                                                                 range: 0...max(0, min(ctbLog2, 5) - minTbLog2))
        maxTransformHierarchyDepthInter = try reader.readUE("max_transform_hierarchy_depth_inter", max: ctbLog2 - minTbLog2)
        maxTransformHierarchyDepthIntra = try reader.readUE("max_transform_hierarchy_depth_intra", max: ctbLog2 - minTbLog2)
        scalingListEnabledFlag = try reader.readFlag("scaling_list_enabled_flag")
        if scalingListEnabledFlag, try reader.readFlag("sps_scaling_list_data_present_flag") {
            scalingListData = try HEVCScalingListData(reader: &reader)
        } else {
            scalingListData = nil
        }
        ampEnabledFlag = try reader.readFlag("amp_enabled_flag")
        sampleAdaptiveOffsetEnabledFlag = try reader.readFlag("sample_adaptive_offset_enabled_flag")
        pcmEnabledFlag = try reader.readFlag("pcm_enabled_flag")
        if pcmEnabledFlag {
            let (luma, chroma) = (8 + bitDepthLumaMinus8, 8 + bitDepthChromaMinus8)
            _ = try reader.readBits(4, "pcm_sample_bit_depth_luma_minus1", tolerating: { $0 < luma }, "below BitDepthY")
            _ = try reader.readBits(4, "pcm_sample_bit_depth_chroma_minus1", tolerating: { $0 < chroma }, "below BitDepthC")
            let minPCM = try reader.readUE("log2_min_pcm_luma_coding_block_size_minus3",
                                           tolerating: (min(minCbLog2, 5) - 3)...(min(ctbLog2, 5) - 3))
            _ = try reader.readUE("log2_diff_max_min_pcm_luma_coding_block_size", tolerating: 0...max(0, min(ctbLog2, 5) - minPCM - 3))
            _ = try reader.readFlag("pcm_loop_filter_disabled_flag")
        }
        let setCount = try reader.readUE("num_short_term_ref_pic_sets", max: 64)
        var sets: [HEVCShortTermReferencePictureSet] = []
        for i in 0..<setCount {
            sets.append(try HEVCShortTermReferencePictureSet(reader: &reader, index: i, earlier: sets, numShortTermRefPicSets: setCount))
        }
        shortTermRefPicSets = sets
        longTermRefPicsPresentFlag = try reader.readFlag("long_term_ref_pics_present_flag")
        var longTerm: [LongTermReferencePicture] = []
        if longTermRefPicsPresentFlag {
            for i in 0..<(try reader.readUE("num_long_term_ref_pics_sps", max: 32)) {
                longTerm.append(LongTermReferencePicture(
                    pocLsb: try reader.readBits(log2MaxPicOrderCntLsbMinus4 + 4, "lt_ref_pic_poc_lsb_sps[\(i)]"),
                    usedByCurrPic: try reader.readFlag("used_by_curr_pic_lt_sps_flag[\(i)]")))
            }
        }
        longTermRefPicsSps = longTerm
        spsTemporalMvpEnabledFlag = try reader.readFlag("sps_temporal_mvp_enabled_flag")
        strongIntraSmoothingEnabledFlag = try reader.readFlag("strong_intra_smoothing_enabled_flag")
        vuiParameters = try reader.readFlag("vui_parameters_present_flag")
            ? try HEVCVUIParameters(reader: &reader, maxSubLayersMinus1: spsMaxSubLayersMinus1) : nil
        let extensions = try reader.readExtensionFlags("sps")
        spsExtensionFlags = extensions
        if extensions & 0x80 != 0 {
            var flags: [Bool] = []
            for name in Self.rangeExtensionNames { flags.append(try reader.readFlag(name)) }
            spsRangeExtensionFlags = flags
        } else {
            spsRangeExtensionFlags = nil
        }
        // The multilayer, 3D and SCC extensions and sps_extension_data_flag are skipped.
        try reader.readTrailingBits(unlessSkipped: extensions & 0x7F != 0)
        diagnostics = reader.diagnostics
    }

    /// The largest `pic_width_in_luma_samples` and `pic_height_in_luma_samples` accepted (level
    /// 6.2's `MaxLumaPs` allows 8 × sqrt(35,651,584) ≈ 16,888).
    public static let maximumDimension = 16888

    /// `sps_range_extension()`'s flags in order (clause 7.3.2.2.2).
    static let rangeExtensionNames = [
        "transform_skip_rotation_enabled_flag", "transform_skip_context_enabled_flag", "implicit_rdpcm_enabled_flag",
        "explicit_rdpcm_enabled_flag", "extended_precision_processing_flag", "intra_smoothing_disabled_flag",
        "high_precision_offsets_enabled_flag", "persistent_rice_adaptation_enabled_flag", "cabac_bypass_alignment_enabled_flag",
    ]

    /// Throws `MediaError.Code.valueOutOfRange` when the conformance window leaves no picture.
    private static func checkWindow(_ window: HEVCWindow, chromaFormatIdc: Int, separateColourPlane: Bool,
                                    width: Int, height: Int, at bit: Int) throws(MediaError) {
        let (unitX, unitY) = HEVCChromaFormat.subsampling(chromaFormatIdc: chromaFormatIdc, separateColourPlane: separateColourPlane)
        if unitX * (window.leftOffset + window.rightOffset) >= width || unitY * (window.topOffset + window.bottomOffset) >= height {
            throw MediaError(.valueOutOfRange, field: "conformance_window_flag", bitOffset: bit,
                            "conformance window \(window) leaves nothing of \(width)x\(height)")
        }
    }
}
