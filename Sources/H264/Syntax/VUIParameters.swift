public import MediaCore
/// Hypothetical reference decoder parameters, `hrd_parameters()` (Annex E.1.2, semantics E.2.2).
public struct HRDParameters: Hashable, Sendable {
    /// `cpb_cnt_minus1`, 0…31: the number of alternative CPB specifications minus 1.
    public let cpbCntMinus1: Int
    /// `bit_rate_scale`, 0…15.
    public let bitRateScale: Int
    /// `cpb_size_scale`, 0…15.
    public let cpbSizeScale: Int
    /// `bit_rate_value_minus1[SchedSelIdx]`, one per CPB specification.
    public let bitRateValueMinus1: [Int]
    /// `cpb_size_value_minus1[SchedSelIdx]`, one per CPB specification.
    public let cpbSizeValueMinus1: [Int]
    /// `cbr_flag[SchedSelIdx]`, one per CPB specification.
    public let cbrFlag: [Bool]
    /// `initial_cpb_removal_delay_length_minus1`, 0…31.
    public let initialCpbRemovalDelayLengthMinus1: Int
    /// `cpb_removal_delay_length_minus1`, 0…31.
    public let cpbRemovalDelayLengthMinus1: Int
    /// `dpb_output_delay_length_minus1`, 0…31.
    public let dpbOutputDelayLengthMinus1: Int
    /// `time_offset_length`, 0…31.
    public let timeOffsetLength: Int

    /// `BitRate[SchedSelIdx]` in bits per second (equation E-37):
    /// `(bit_rate_value_minus1 + 1) × 2^(6 + bit_rate_scale)`.
    public func bitRate(at schedSelIdx: Int) -> Int? {
        guard bitRateValueMinus1.indices.contains(schedSelIdx) else { return nil }
        return (bitRateValueMinus1[schedSelIdx] + 1) << (6 + bitRateScale)
    }

    /// `CpbSize[SchedSelIdx]` in bits (equation E-38):
    /// `(cpb_size_value_minus1 + 1) × 2^(4 + cpb_size_scale)`.
    public func cpbSize(at schedSelIdx: Int) -> Int? {
        guard cpbSizeValueMinus1.indices.contains(schedSelIdx) else { return nil }
        return (cpbSizeValueMinus1[schedSelIdx] + 1) << (4 + cpbSizeScale)
    }

    /// Reads `hrd_parameters()` in Annex E.1.2 order.
    package init(reader: inout BitReader) throws(MediaError) {
        cpbCntMinus1 = try reader.readUE("cpb_cnt_minus1", max: 31)
        bitRateScale = try reader.readBits(4, "bit_rate_scale")
        cpbSizeScale = try reader.readBits(4, "cpb_size_scale")
        var bitRates: [Int] = [], cpbSizes: [Int] = [], cbr: [Bool] = []
        for i in 0...cpbCntMinus1 {
            // E.2.2: for i > 0 bit rates increase and CPB sizes do not; tolerable (kept, warned).
            let bitRateAt = reader.bitOffset
            bitRates.append(try reader.readUE("bit_rate_value_minus1[\(i)]"))
            if i > 0 && bitRates[i] <= bitRates[i - 1] {
                reader.warn(.valueOutOfRange, "bit_rate_value_minus1[\(i)]", at: bitRateAt,
                            "\(bitRates[i]) is not greater than bit_rate_value_minus1[\(i - 1)] = \(bitRates[i - 1]) (kept)")
            }
            let cpbSizeAt = reader.bitOffset
            cpbSizes.append(try reader.readUE("cpb_size_value_minus1[\(i)]"))
            if i > 0 && cpbSizes[i] > cpbSizes[i - 1] {
                reader.warn(.valueOutOfRange, "cpb_size_value_minus1[\(i)]", at: cpbSizeAt,
                            "\(cpbSizes[i]) is greater than cpb_size_value_minus1[\(i - 1)] = \(cpbSizes[i - 1]) (kept)")
            }
            cbr.append(try reader.readFlag("cbr_flag[\(i)]"))
        }
        bitRateValueMinus1 = bitRates
        cpbSizeValueMinus1 = cpbSizes
        cbrFlag = cbr
        initialCpbRemovalDelayLengthMinus1 = try reader.readBits(5, "initial_cpb_removal_delay_length_minus1")
        cpbRemovalDelayLengthMinus1 = try reader.readBits(5, "cpb_removal_delay_length_minus1")
        dpbOutputDelayLengthMinus1 = try reader.readBits(5, "dpb_output_delay_length_minus1")
        timeOffsetLength = try reader.readBits(5, "time_offset_length")
    }
}

/// Video usability information, `vui_parameters()` (Annex E.1.1, semantics E.2.1).
///
/// Values that are absent from the bitstream hold the value the semantics infer. The VUI does not
/// change how the rest of the stream is read, so a value outside its range here (a reserved
/// colour description, zero timing, a bitstream restriction beyond its limit) is kept and recorded
/// as a warning in the SPS's ``SequenceParameterSet/diagnostics``, as FFmpeg reads on.
public struct VUIParameters: Hashable, Sendable {
    /// `aspect_ratio_info_present_flag`.
    public let aspectRatioInfoPresentFlag: Bool
    /// `aspect_ratio_idc` (Table E-1); 0 (unspecified) when absent, 255 is `Extended_SAR`.
    public let aspectRatioIdc: Int
    /// `sar_width` (present only for `Extended_SAR`), else 0.
    public let sarWidth: Int
    /// `sar_height` (present only for `Extended_SAR`), else 0.
    public let sarHeight: Int
    /// `overscan_info_present_flag`.
    public let overscanInfoPresentFlag: Bool
    /// `overscan_appropriate_flag`; false when absent.
    public let overscanAppropriateFlag: Bool
    /// `video_signal_type_present_flag`.
    public let videoSignalTypePresentFlag: Bool
    /// `video_format` (Table E-2), 0…7; 5 (unspecified) when absent.
    public let videoFormat: Int
    /// `video_full_range_flag`; false when absent.
    public let videoFullRangeFlag: Bool
    /// `colour_description_present_flag`.
    public let colourDescriptionPresentFlag: Bool
    /// `colour_primaries` (Table E-3); 2 (unspecified) when absent.
    public let colourPrimaries: Int
    /// `transfer_characteristics` (Table E-4); 2 (unspecified) when absent.
    public let transferCharacteristics: Int
    /// `matrix_coefficients` (Table E-5); 2 (unspecified) when absent.
    public let matrixCoefficients: Int
    /// `chroma_loc_info_present_flag`.
    public let chromaLocInfoPresentFlag: Bool
    /// `chroma_sample_loc_type_top_field`, 0…5; 0 when absent.
    public let chromaSampleLocTypeTopField: Int
    /// `chroma_sample_loc_type_bottom_field`, 0…5; 0 when absent.
    public let chromaSampleLocTypeBottomField: Int
    /// `timing_info_present_flag`.
    public let timingInfoPresentFlag: Bool
    /// `num_units_in_tick` (32 bits); 0 when absent.
    public let numUnitsInTick: Int
    /// `time_scale` (32 bits, in Hz); 0 when absent.
    public let timeScale: Int
    /// `fixed_frame_rate_flag`; false when absent.
    public let fixedFrameRateFlag: Bool
    /// `nal_hrd_parameters_present_flag`.
    public var nalHrdParametersPresentFlag: Bool { nalHrdParameters != nil }
    /// The NAL HRD parameters, when `nal_hrd_parameters_present_flag` is 1.
    public let nalHrdParameters: HRDParameters?
    /// `vcl_hrd_parameters_present_flag`.
    public var vclHrdParametersPresentFlag: Bool { vclHrdParameters != nil }
    /// The VCL HRD parameters, when `vcl_hrd_parameters_present_flag` is 1.
    public let vclHrdParameters: HRDParameters?
    /// `low_delay_hrd_flag`; inferred as `1 − fixed_frame_rate_flag` when absent.
    public let lowDelayHrdFlag: Bool
    /// `pic_struct_present_flag`.
    public let picStructPresentFlag: Bool
    /// `bitstream_restriction_flag`.
    public let bitstreamRestrictionFlag: Bool
    /// `motion_vectors_over_pic_boundaries_flag`; true when absent.
    public let motionVectorsOverPicBoundariesFlag: Bool
    /// `max_bytes_per_pic_denom`, 0…16 (a larger value is kept with a warning); 2 when absent.
    public let maxBytesPerPicDenom: Int
    /// `max_bits_per_mb_denom`, 0…16 (a larger value is kept with a warning); 1 when absent.
    public let maxBitsPerMbDenom: Int
    /// `log2_max_mv_length_horizontal`, 0…15 (0…16 in the 2003 and 2005 editions: a larger value is kept with a warning); 15 when absent.
    public let log2MaxMvLengthHorizontal: Int
    /// `log2_max_mv_length_vertical`, 0…15 (0…16 in the 2003 and 2005 editions: a larger value is kept with a warning); 15 when absent.
    public let log2MaxMvLengthVertical: Int
    /// `max_num_reorder_frames`, 0…16 (a larger value is kept with a warning); nil when absent (the inferred value depends on the level).
    public let maxNumReorderFrames: Int?
    /// `max_dec_frame_buffering`, 0…16 (a larger value is kept with a warning); nil when absent (the inferred value is `MaxDpbFrames`).
    public let maxDecFrameBuffering: Int?

    /// The sample aspect ratio from Table E-1 or `sar_width:sar_height`; nil when unspecified
    /// (including an `Extended_SAR` with a zero term).
    public var sampleAspectRatio: (width: Int, height: Int)? {
        let table: [(Int, Int)] = [(1, 1), (12, 11), (10, 11), (16, 11), (40, 33), (24, 11), (20, 11), (32, 11),
                                   (80, 33), (18, 11), (15, 11), (64, 33), (160, 99), (4, 3), (3, 2), (2, 1)]
        if aspectRatioIdc == 255 {
            return sarWidth > 0 && sarHeight > 0 ? (sarWidth, sarHeight) : nil
        }
        guard aspectRatioIdc >= 1 && aspectRatioIdc <= table.count else { return nil }
        return table[aspectRatioIdc - 1]
    }

    /// Reads `vui_parameters()` in Annex E.1.1 order.
    package init(reader: inout BitReader) throws(MediaError) {
        aspectRatioInfoPresentFlag = try reader.readFlag("aspect_ratio_info_present_flag")
        var idc = 0, sarW = 0, sarH = 0
        if aspectRatioInfoPresentFlag {
            idc = try reader.readBits(8, "aspect_ratio_idc", tolerating: { $0 <= 16 || $0 == 255 }, "0...16 or 255 (Table E-1)")
            if idc == 255 {
                sarW = try reader.readBits(16, "sar_width")
                sarH = try reader.readBits(16, "sar_height")
            }
        }
        aspectRatioIdc = idc
        sarWidth = sarW
        sarHeight = sarH

        overscanInfoPresentFlag = try reader.readFlag("overscan_info_present_flag")
        overscanAppropriateFlag = overscanInfoPresentFlag ? try reader.readFlag("overscan_appropriate_flag") : false

        videoSignalTypePresentFlag = try reader.readFlag("video_signal_type_present_flag")
        var format = 5, fullRange = false, colourPresent = false, primaries = 2, transfer = 2, matrix = 2
        if videoSignalTypePresentFlag {
            format = try reader.readBits(3, "video_format", tolerating: { $0 <= 5 }, "0...5 (Table E-2)")
            fullRange = try reader.readFlag("video_full_range_flag")
            colourPresent = try reader.readFlag("colour_description_present_flag")
            if colourPresent {
                primaries = try reader.readBits(8, "colour_primaries", tolerating: { (1...12).contains($0) && $0 != 3 || $0 == 22 },
                                                "1, 2, 4...12 or 22 (Table E-3)")
                transfer = try reader.readBits(8, "transfer_characteristics", tolerating: { (1...18).contains($0) && $0 != 3 },
                                               "1, 2, 4...18 (Table E-4)")
                matrix = try reader.readBits(8, "matrix_coefficients", tolerating: { (0...14).contains($0) && $0 != 3 },
                                             "0...2, 4...14 (Table E-5)")
            }
        }
        videoFormat = format
        videoFullRangeFlag = fullRange
        colourDescriptionPresentFlag = colourPresent
        colourPrimaries = primaries
        transferCharacteristics = transfer
        matrixCoefficients = matrix

        chromaLocInfoPresentFlag = try reader.readFlag("chroma_loc_info_present_flag")
        if chromaLocInfoPresentFlag {
            chromaSampleLocTypeTopField = try reader.readUE("chroma_sample_loc_type_top_field", tolerating: 0...5)
            chromaSampleLocTypeBottomField = try reader.readUE("chroma_sample_loc_type_bottom_field", tolerating: 0...5)
        } else {
            chromaSampleLocTypeTopField = 0
            chromaSampleLocTypeBottomField = 0
        }

        timingInfoPresentFlag = try reader.readFlag("timing_info_present_flag")
        if timingInfoPresentFlag {
            // Zero is not allowed by E.2.1 but is kept with a warning (frameRate is then nil), as
            // FFmpeg's decoder accepts it, so that such a stream can still be read.
            numUnitsInTick = try reader.readBits(32, "num_units_in_tick", tolerating: { $0 > 0 }, "greater than 0 (E.2.1)")
            timeScale = try reader.readBits(32, "time_scale", tolerating: { $0 > 0 }, "greater than 0 (E.2.1)")
            fixedFrameRateFlag = try reader.readFlag("fixed_frame_rate_flag")
        } else {
            numUnitsInTick = 0
            timeScale = 0
            fixedFrameRateFlag = false
        }

        nalHrdParameters = try reader.readFlag("nal_hrd_parameters_present_flag") ? try HRDParameters(reader: &reader) : nil
        vclHrdParameters = try reader.readFlag("vcl_hrd_parameters_present_flag") ? try HRDParameters(reader: &reader) : nil
        if nalHrdParameters != nil || vclHrdParameters != nil {
            lowDelayHrdFlag = try reader.readFlag("low_delay_hrd_flag")
        } else {
            lowDelayHrdFlag = !fixedFrameRateFlag
        }
        picStructPresentFlag = try reader.readFlag("pic_struct_present_flag")

        bitstreamRestrictionFlag = try reader.readFlag("bitstream_restriction_flag")
        if bitstreamRestrictionFlag {
            motionVectorsOverPicBoundariesFlag = try reader.readFlag("motion_vectors_over_pic_boundaries_flag")
            // Limits a decoder may ignore: out-of-range values (e.g. log2_max_mv_length_* = 16,
            // allowed by the 2003 and 2005 editions) are kept with a warning.
            maxBytesPerPicDenom = try reader.readUE("max_bytes_per_pic_denom", tolerating: 0...16)
            maxBitsPerMbDenom = try reader.readUE("max_bits_per_mb_denom", tolerating: 0...16)
            log2MaxMvLengthHorizontal = try reader.readUE("log2_max_mv_length_horizontal", tolerating: 0...15)
            log2MaxMvLengthVertical = try reader.readUE("log2_max_mv_length_vertical", tolerating: 0...15)
            let reorder = try reader.readUE("max_num_reorder_frames", tolerating: 0...16)
            let bufferingAt = reader.bitOffset
            let buffering = try reader.readUE("max_dec_frame_buffering", tolerating: 0...16)
            if buffering < reorder && buffering <= 16 {
                reader.warn(.valueOutOfRange, "max_dec_frame_buffering", at: bufferingAt,
                            "\(buffering) is less than max_num_reorder_frames = \(reorder) (kept)")
            }
            maxNumReorderFrames = reorder
            maxDecFrameBuffering = buffering
        } else {
            motionVectorsOverPicBoundariesFlag = true
            maxBytesPerPicDenom = 2
            maxBitsPerMbDenom = 1
            log2MaxMvLengthHorizontal = 15
            log2MaxMvLengthVertical = 15
            maxNumReorderFrames = nil
            maxDecFrameBuffering = nil
        }
    }
}
