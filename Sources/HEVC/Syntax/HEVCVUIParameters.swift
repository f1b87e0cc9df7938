public import MediaCore

/// `vui_parameters()` (ITU-T H.265 clause E.2.1): aspect ratio, colour description, field
/// signalling, the default display window, timing with its HRD, and bitstream restrictions.
///
/// Values absent from the bitstream hold what the semantics infer. Elements that do not change
/// how the rest is read are tolerable: a value out of range is kept with a warning.
public struct HEVCVUIParameters: Hashable, Sendable {
    /// `aspect_ratio_idc` (Table E.1); 0 (unspecified) when absent, 255 with ``sarWidth``/``sarHeight``.
    public let aspectRatioIdc: Int
    /// `sar_width` (`aspect_ratio_idc` 255); 0 otherwise.
    public let sarWidth: Int
    /// `sar_height` (`aspect_ratio_idc` 255); 0 otherwise.
    public let sarHeight: Int
    /// `overscan_appropriate_flag`, when `overscan_info_present_flag` is 1.
    public let overscanAppropriateFlag: Bool?
    /// `video_format`; 5 (unspecified) when absent.
    public let videoFormat: Int
    /// `video_full_range_flag`; false when absent.
    public let videoFullRangeFlag: Bool
    /// `colour_primaries`; 2 (unspecified) when absent.
    public let colourPrimaries: Int
    /// `transfer_characteristics`; 2 (unspecified) when absent.
    public let transferCharacteristics: Int
    /// `matrix_coefficients`; 2 (unspecified) when absent.
    public let matrixCoefficients: Int
    /// `chroma_sample_loc_type_top_field`, 0…5; 0 when absent.
    public let chromaSampleLocTypeTopField: Int
    /// `chroma_sample_loc_type_bottom_field`, 0…5; 0 when absent.
    public let chromaSampleLocTypeBottomField: Int
    /// `neutral_chroma_indication_flag`.
    public let neutralChromaIndicationFlag: Bool
    /// `field_seq_flag`: each picture is a field.
    public let fieldSeqFlag: Bool
    /// `frame_field_info_present_flag`: picture timing SEI carries `pic_struct`.
    public let frameFieldInfoPresentFlag: Bool
    /// `def_disp_win_left_offset`, `_right_`, `_top_`, `_bottom_` (in chroma units), when
    /// `default_display_window_flag` is 1.
    public let defaultDisplayWindow: HEVCWindow?
    /// `vui_num_units_in_tick`, when `vui_timing_info_present_flag` is 1.
    public let numUnitsInTick: Int?
    /// `vui_time_scale`, when `vui_timing_info_present_flag` is 1.
    public let timeScale: Int?
    /// `vui_num_ticks_poc_diff_one_minus1`, when `vui_poc_proportional_to_timing_flag` is 1.
    public let numTicksPocDiffOneMinus1: Int?
    /// The HRD, when `vui_hrd_parameters_present_flag` is 1.
    public let hrdParameters: HEVCHRDParameters?
    /// `min_spatial_segmentation_idc`, 0…4095 (the `hvcC` record carries it); 0 when absent.
    public let minSpatialSegmentationIdc: Int
    /// `bitstream_restriction_flag`.
    public let bitstreamRestrictionFlag: Bool

    /// Reads the VUI of an SPS with `sps_max_sub_layers_minus1` = `maxSubLayersMinus1`.
    init(reader: inout BitReader, maxSubLayersMinus1: Int) throws(MediaError) {
        var sar = (idc: 0, width: 0, height: 0)
        if try reader.readFlag("aspect_ratio_info_present_flag") {
            sar.idc = try reader.readBits(8, "aspect_ratio_idc")
            if sar.idc == 255 {
                sar.width = try reader.readBits(16, "sar_width")
                sar.height = try reader.readBits(16, "sar_height")
            }
        }
        (aspectRatioIdc, sarWidth, sarHeight) = sar
        overscanAppropriateFlag = try reader.readFlag("overscan_info_present_flag")
            ? try reader.readFlag("overscan_appropriate_flag") : nil
        var signal = (format: 5, fullRange: false, primaries: 2, transfer: 2, matrix: 2)
        if try reader.readFlag("video_signal_type_present_flag") {
            signal.format = try reader.readBits(3, "video_format")
            signal.fullRange = try reader.readFlag("video_full_range_flag")
            if try reader.readFlag("colour_description_present_flag") {
                signal.primaries = try reader.readBits(8, "colour_primaries")
                signal.transfer = try reader.readBits(8, "transfer_characteristics")
                signal.matrix = try reader.readBits(8, "matrix_coefficients")
            }
        }
        (videoFormat, videoFullRangeFlag, colourPrimaries, transferCharacteristics, matrixCoefficients) = signal
        var chromaLoc = (top: 0, bottom: 0)
        if try reader.readFlag("chroma_loc_info_present_flag") {
            chromaLoc.top = try reader.readUE("chroma_sample_loc_type_top_field", tolerating: 0...5)
            chromaLoc.bottom = try reader.readUE("chroma_sample_loc_type_bottom_field", tolerating: 0...5)
        }
        (chromaSampleLocTypeTopField, chromaSampleLocTypeBottomField) = chromaLoc
        neutralChromaIndicationFlag = try reader.readFlag("neutral_chroma_indication_flag")
        fieldSeqFlag = try reader.readFlag("field_seq_flag")
        frameFieldInfoPresentFlag = try reader.readFlag("frame_field_info_present_flag")
        if try reader.readFlag("default_display_window_flag") {
            defaultDisplayWindow = try HEVCWindow(reader: &reader, prefix: "def_disp_win", tolerating: 0...16384)
        } else {
            defaultDisplayWindow = nil
        }
        var timing: (units: Int?, scale: Int?, ticks: Int?, hrd: HEVCHRDParameters?) = (nil, nil, nil, nil)
        if try reader.readFlag("vui_timing_info_present_flag") {
            timing.units = try reader.readBits(32, "vui_num_units_in_tick", tolerating: { $0 > 0 }, "1...4294967295")
            timing.scale = try reader.readBits(32, "vui_time_scale", tolerating: { $0 > 0 }, "1...4294967295")
            if try reader.readFlag("vui_poc_proportional_to_timing_flag") {
                timing.ticks = try reader.readUE("vui_num_ticks_poc_diff_one_minus1")
            }
            if try reader.readFlag("vui_hrd_parameters_present_flag") {
                timing.hrd = try HEVCHRDParameters(reader: &reader, commonInfPresentFlag: true,
                                                   maxNumSubLayersMinus1: maxSubLayersMinus1)
            }
        }
        (numUnitsInTick, timeScale, numTicksPocDiffOneMinus1, hrdParameters) = timing
        bitstreamRestrictionFlag = try reader.readFlag("bitstream_restriction_flag")
        if bitstreamRestrictionFlag {
            _ = try reader.readFlag("tiles_fixed_structure_flag")
            _ = try reader.readFlag("motion_vectors_over_pic_boundaries_flag")
            _ = try reader.readFlag("restricted_ref_pic_lists_flag")
            minSpatialSegmentationIdc = try reader.readUE("min_spatial_segmentation_idc", tolerating: 0...4095)
            _ = try reader.readUE("max_bytes_per_pic_denom", tolerating: 0...16)
            _ = try reader.readUE("max_bits_per_min_cu_denom", tolerating: 0...16)
            _ = try reader.readUE("log2_max_mv_length_horizontal", tolerating: 0...16)
            _ = try reader.readUE("log2_max_mv_length_vertical", tolerating: 0...16)
        } else {
            minSpatialSegmentationIdc = 0
        }
    }
}
