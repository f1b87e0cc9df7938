public import MediaCore

/// A picture parameter set, `pic_parameter_set_rbsp()` (ITU-T H.265 clause 7.3.2.3, semantics
/// 7.4.3.3).
///
/// Parsed from a whole NAL unit of type 34. Every element is read in clause 7.3 order and
/// range-checked as it is read. Ranges that depend on the SPS (`init_qp_minus26`,
/// `diff_cu_qp_delta_depth`, `log2_parallel_merge_level_minus2`) are checked against it when it
/// is known, and against the widest an SPS allows otherwise. The range extension is parsed;
/// the multilayer, 3D, SCC and further extensions are skipped by their flags.
public struct HEVCPictureParameterSet: Hashable, Sendable {
    /// `pps_pic_parameter_set_id`, 0…63.
    public let ppsPicParameterSetId: Int
    /// `pps_seq_parameter_set_id`, 0…15.
    public let ppsSeqParameterSetId: Int
    /// `dependent_slice_segments_enabled_flag`.
    public let dependentSliceSegmentsEnabledFlag: Bool
    /// `output_flag_present_flag`.
    public let outputFlagPresentFlag: Bool
    /// `num_extra_slice_header_bits`, 0…7.
    public let numExtraSliceHeaderBits: Int
    /// `sign_data_hiding_enabled_flag`.
    public let signDataHidingEnabledFlag: Bool
    /// `cabac_init_present_flag`.
    public let cabacInitPresentFlag: Bool
    /// `num_ref_idx_l0_default_active_minus1`, 0…14.
    public let numRefIdxL0DefaultActiveMinus1: Int
    /// `num_ref_idx_l1_default_active_minus1`, 0…14.
    public let numRefIdxL1DefaultActiveMinus1: Int
    /// `init_qp_minus26`, −(26 + 6 × `bit_depth_luma_minus8`)…25.
    public let initQpMinus26: Int
    /// `constrained_intra_pred_flag`.
    public let constrainedIntraPredFlag: Bool
    /// `transform_skip_enabled_flag`.
    public let transformSkipEnabledFlag: Bool
    /// `cu_qp_delta_enabled_flag`.
    public let cuQpDeltaEnabledFlag: Bool
    /// `diff_cu_qp_delta_depth`; 0 when absent.
    public let diffCuQpDeltaDepth: Int
    /// `pps_cb_qp_offset`, −12…12.
    public let ppsCbQpOffset: Int
    /// `pps_cr_qp_offset`, −12…12.
    public let ppsCrQpOffset: Int
    /// `pps_slice_chroma_qp_offsets_present_flag`.
    public let ppsSliceChromaQpOffsetsPresentFlag: Bool
    /// `weighted_pred_flag`.
    public let weightedPredFlag: Bool
    /// `weighted_bipred_flag`.
    public let weightedBipredFlag: Bool
    /// `transquant_bypass_enabled_flag`.
    public let transquantBypassEnabledFlag: Bool
    /// `tiles_enabled_flag`.
    public let tilesEnabledFlag: Bool
    /// `entropy_coding_sync_enabled_flag` (wavefront parallel processing).
    public let entropyCodingSyncEnabledFlag: Bool
    /// `num_tile_columns_minus1`; 0 without tiles.
    public let numTileColumnsMinus1: Int
    /// `num_tile_rows_minus1`; 0 without tiles.
    public let numTileRowsMinus1: Int
    /// `pps_loop_filter_across_slices_enabled_flag`.
    public let ppsLoopFilterAcrossSlicesEnabledFlag: Bool
    /// `deblocking_filter_control_present_flag`.
    public let deblockingFilterControlPresentFlag: Bool
    /// `pps_deblocking_filter_disabled_flag`; false when absent.
    public let ppsDeblockingFilterDisabledFlag: Bool
    /// The coded scaling lists, when `pps_scaling_list_data_present_flag` is 1.
    public let scalingListData: HEVCScalingListData?
    /// `lists_modification_present_flag`.
    public let listsModificationPresentFlag: Bool
    /// `log2_parallel_merge_level_minus2`.
    public let log2ParallelMergeLevelMinus2: Int
    /// `slice_segment_header_extension_present_flag`.
    public let sliceSegmentHeaderExtensionPresentFlag: Bool
    /// `pps_range_extension_flag`, `pps_multilayer_extension_flag`, `pps_3d_extension_flag`,
    /// `pps_scc_extension_flag` and `pps_extension_4bits` as one value, first flag highest
    /// (bits 7…0); 0 when `pps_extension_present_flag` is 0.
    public let ppsExtensionFlags: Int
    /// Tolerable problems met while parsing, in bitstream order (see
    /// ``HEVCSequenceParameterSet/diagnostics``).
    public let diagnostics: [MediaError]

    /// Parses a picture parameter set NAL unit.
    ///
    /// - Parameters:
    ///   - nalUnit: the whole NAL unit, both header bytes included, emulation prevention bytes
    ///     still present.
    ///   - sequenceParameterSets: known SPSs by `sps_seq_parameter_set_id`, for the ranges that
    ///     depend on the SPS.
    /// - Throws: `MediaError` with the element's name and bit offset: the codes of
    ///   ``HEVCSequenceParameterSet/init(nalUnit:)`` (`unexpectedNALUnitType` for a type other than 34).
    public init(nalUnit: some Collection<UInt8>, sequenceParameterSets: [Int: HEVCSequenceParameterSet] = [:]) throws(MediaError) {
        self = try BitReader.readHEVC(nalUnit: nalUnit) { (reader) throws(MediaError) in
            try Self(reader: &reader, sequenceParameterSets: sequenceParameterSets)
        }.value
    }

    /// Every syntax element of a PPS NAL unit in bitstream order, from the header's
    /// `forbidden_zero_bit` to the RBSP trailing bits, with FFmpeg's `trace_headers` names.
    ///
    /// - Throws: the errors of ``init(nalUnit:sequenceParameterSets:)``.
    public static func syntaxElements(nalUnit: some Collection<UInt8>,
                                      sequenceParameterSets: [Int: HEVCSequenceParameterSet] = [:]) throws(MediaError) -> [SyntaxElement] {
        try BitReader.readHEVC(nalUnit: nalUnit, recordsElements: true) { (reader) throws(MediaError) in
            try Self(reader: &reader, sequenceParameterSets: sequenceParameterSets)
        }.elements
    }

    private init(reader: inout BitReader, sequenceParameterSets: [Int: HEVCSequenceParameterSet]) throws(MediaError) {
        try reader.readHEVCNALUnitHeader(expecting: .pictureParameterSet)
        ppsPicParameterSetId = try reader.readUE("pps_pic_parameter_set_id", max: 63)
        ppsSeqParameterSetId = try reader.readUE("pps_seq_parameter_set_id", max: 15)
        let sps = sequenceParameterSets[ppsSeqParameterSetId]
        dependentSliceSegmentsEnabledFlag = try reader.readFlag("dependent_slice_segments_enabled_flag")
        outputFlagPresentFlag = try reader.readFlag("output_flag_present_flag")
        numExtraSliceHeaderBits = try reader.readBits(3, "num_extra_slice_header_bits")
        signDataHidingEnabledFlag = try reader.readFlag("sign_data_hiding_enabled_flag")
        cabacInitPresentFlag = try reader.readFlag("cabac_init_present_flag")
        numRefIdxL0DefaultActiveMinus1 = try reader.readUE("num_ref_idx_l0_default_active_minus1", max: 14)
        numRefIdxL1DefaultActiveMinus1 = try reader.readUE("num_ref_idx_l1_default_active_minus1", max: 14)
        initQpMinus26 = try reader.readSE("init_qp_minus26", tolerating: -(26 + 6 * (sps?.bitDepthLumaMinus8 ?? 8))...25)
        constrainedIntraPredFlag = try reader.readFlag("constrained_intra_pred_flag")
        transformSkipEnabledFlag = try reader.readFlag("transform_skip_enabled_flag")
        cuQpDeltaEnabledFlag = try reader.readFlag("cu_qp_delta_enabled_flag")
        diffCuQpDeltaDepth = cuQpDeltaEnabledFlag
            ? try reader.readUE("diff_cu_qp_delta_depth", tolerating: 0...(sps?.log2DiffMaxMinLumaCodingBlockSize ?? 3)) : 0
        ppsCbQpOffset = try reader.readSE("pps_cb_qp_offset", tolerating: -12...12)
        ppsCrQpOffset = try reader.readSE("pps_cr_qp_offset", tolerating: -12...12)
        ppsSliceChromaQpOffsetsPresentFlag = try reader.readFlag("pps_slice_chroma_qp_offsets_present_flag")
        weightedPredFlag = try reader.readFlag("weighted_pred_flag")
        weightedBipredFlag = try reader.readFlag("weighted_bipred_flag")
        transquantBypassEnabledFlag = try reader.readFlag("transquant_bypass_enabled_flag")
        tilesEnabledFlag = try reader.readFlag("tiles_enabled_flag")
        entropyCodingSyncEnabledFlag = try reader.readFlag("entropy_coding_sync_enabled_flag")
        var tiles = (columns: 0, rows: 0)
        if tilesEnabledFlag {
            tiles.columns = try reader.readUE("num_tile_columns_minus1", max: 19)
            tiles.rows = try reader.readUE("num_tile_rows_minus1", max: 21)
            if !(try reader.readFlag("uniform_spacing_flag")) {
                for i in 0..<tiles.columns { _ = try reader.readUE("column_width_minus1[\(i)]", max: HEVCSequenceParameterSet.maximumDimension) }
                for i in 0..<tiles.rows { _ = try reader.readUE("row_height_minus1[\(i)]", max: HEVCSequenceParameterSet.maximumDimension) }
            }
            _ = try reader.readFlag("loop_filter_across_tiles_enabled_flag")
        }
        (numTileColumnsMinus1, numTileRowsMinus1) = tiles
        ppsLoopFilterAcrossSlicesEnabledFlag = try reader.readFlag("pps_loop_filter_across_slices_enabled_flag")
        deblockingFilterControlPresentFlag = try reader.readFlag("deblocking_filter_control_present_flag")
        var deblockingDisabled = false
        if deblockingFilterControlPresentFlag {
            _ = try reader.readFlag("deblocking_filter_override_enabled_flag")
            deblockingDisabled = try reader.readFlag("pps_deblocking_filter_disabled_flag")
            if !deblockingDisabled {
                _ = try reader.readSE("pps_beta_offset_div2", tolerating: -6...6)
                _ = try reader.readSE("pps_tc_offset_div2", tolerating: -6...6)
            }
        }
        ppsDeblockingFilterDisabledFlag = deblockingDisabled
        scalingListData = try reader.readFlag("pps_scaling_list_data_present_flag") ? try HEVCScalingListData(reader: &reader) : nil
        listsModificationPresentFlag = try reader.readFlag("lists_modification_present_flag")
        log2ParallelMergeLevelMinus2 = try reader.readUE("log2_parallel_merge_level_minus2",
                                                         tolerating: 0...((sps?.ctbLog2SizeY ?? 6) - 2))
        sliceSegmentHeaderExtensionPresentFlag = try reader.readFlag("slice_segment_header_extension_present_flag")
        let extensions = try reader.readExtensionFlags("pps")
        ppsExtensionFlags = extensions
        if extensions & 0x80 != 0 { try Self.readRangeExtension(&reader, transformSkip: transformSkipEnabledFlag, sps: sps) }
        // The multilayer, 3D and SCC extensions and pps_extension_data_flag are skipped.
        try reader.readTrailingBits(unlessSkipped: extensions & 0x7F != 0)
        diagnostics = reader.diagnostics
    }

    /// `pps_range_extension()` (clause 7.3.2.3.2).
    private static func readRangeExtension(_ reader: inout BitReader, transformSkip: Bool, sps: HEVCSequenceParameterSet?) throws(MediaError) {
        if transformSkip { _ = try reader.readUE("log2_max_transform_skip_block_size_minus2", tolerating: 0...3) }
        _ = try reader.readFlag("cross_component_prediction_enabled_flag")
        if try reader.readFlag("chroma_qp_offset_list_enabled_flag") {
            _ = try reader.readUE("diff_cu_chroma_qp_offset_depth", tolerating: 0...(sps?.log2DiffMaxMinLumaCodingBlockSize ?? 3))
            let length = try reader.readUE("chroma_qp_offset_list_len_minus1", max: 5)
            for i in 0...length {
                _ = try reader.readSE("cb_qp_offset_list[\(i)]", tolerating: -12...12)
                _ = try reader.readSE("cr_qp_offset_list[\(i)]", tolerating: -12...12)
            }
        }
        _ = try reader.readUE("log2_sao_offset_scale_luma", tolerating: 0...max(0, (sps?.bitDepthLumaMinus8 ?? 8) - 2))
        _ = try reader.readUE("log2_sao_offset_scale_chroma", tolerating: 0...max(0, (sps?.bitDepthChromaMinus8 ?? 8) - 2))
    }
}
