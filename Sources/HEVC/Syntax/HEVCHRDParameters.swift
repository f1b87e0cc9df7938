public import MediaCore

/// `hrd_parameters(commonInfPresentFlag, maxNumSubLayersMinus1)` (ITU-T H.265 clause E.2.2):
/// the hypothetical reference decoder's timing and buffers, in the VUI and the VPS.
public struct HEVCHRDParameters: Hashable, Sendable {
    /// One coded picture buffer specification of `sub_layer_hrd_parameters()` (clause E.2.3).
    public struct CodedPictureBuffer: Hashable, Sendable {
        /// `bit_rate_value_minus1[i]`.
        public let bitRateValueMinus1: Int
        /// `cpb_size_value_minus1[i]`.
        public let cpbSizeValueMinus1: Int
        /// `cpb_size_du_value_minus1[i]`; 0 without sub-picture parameters.
        public let cpbSizeDuValueMinus1: Int
        /// `bit_rate_du_value_minus1[i]`; 0 without sub-picture parameters.
        public let bitRateDuValueMinus1: Int
        /// `cbr_flag[i]`.
        public let cbrFlag: Bool
    }

    /// The per-sub-layer part of the loop in clause E.2.2.
    public struct SubLayer: Hashable, Sendable {
        /// `fixed_pic_rate_general_flag[i]`.
        public let fixedPicRateGeneralFlag: Bool
        /// `fixed_pic_rate_within_cvs_flag[i]`; true when `fixed_pic_rate_general_flag` is.
        public let fixedPicRateWithinCvsFlag: Bool
        /// `elemental_duration_in_tc_minus1[i]`, 0…2047; 0 when absent.
        public let elementalDurationInTcMinus1: Int
        /// `low_delay_hrd_flag[i]`; false when absent.
        public let lowDelayHrdFlag: Bool
        /// `cpb_cnt_minus1[i]`, 0…31; 0 when absent.
        public let cpbCntMinus1: Int
        /// The NAL HRD's buffers, when `nal_hrd_parameters_present_flag` is 1.
        public let nalCodedPictureBuffers: [CodedPictureBuffer]?
        /// The VCL HRD's buffers, when `vcl_hrd_parameters_present_flag` is 1.
        public let vclCodedPictureBuffers: [CodedPictureBuffer]?
    }

    /// `nal_hrd_parameters_present_flag`; false when the common information is absent.
    public let nalHrdParametersPresentFlag: Bool
    /// `vcl_hrd_parameters_present_flag`; false when the common information is absent.
    public let vclHrdParametersPresentFlag: Bool
    /// `sub_pic_hrd_params_present_flag`; false when absent.
    public let subPicHrdParamsPresentFlag: Bool
    /// `bit_rate_scale`; 0 when absent.
    public let bitRateScale: Int
    /// `cpb_size_scale`; 0 when absent.
    public let cpbSizeScale: Int
    /// `initial_cpb_removal_delay_length_minus1`; 23 when absent.
    public let initialCpbRemovalDelayLengthMinus1: Int
    /// `au_cpb_removal_delay_length_minus1`; 23 when absent.
    public let auCpbRemovalDelayLengthMinus1: Int
    /// `dpb_output_delay_length_minus1`; 23 when absent.
    public let dpbOutputDelayLengthMinus1: Int
    /// One entry for each sub-layer, 0…`maxNumSubLayersMinus1`.
    public let subLayers: [SubLayer]

    /// Reads `hrd_parameters(commonInfPresentFlag, maxNumSubLayersMinus1)`
    /// (`maxNumSubLayersMinus1` 0…6, checked by the caller).
    init(reader: inout BitReader, commonInfPresentFlag: Bool, maxNumSubLayersMinus1: Int) throws(MediaError) {
        var nal = false, vcl = false, subPic = false
        var bitRateScale = 0, cpbSizeScale = 0, lengths = (23, 23, 23)
        if commonInfPresentFlag {
            nal = try reader.readFlag("nal_hrd_parameters_present_flag")
            vcl = try reader.readFlag("vcl_hrd_parameters_present_flag")
            if nal || vcl {
                subPic = try reader.readFlag("sub_pic_hrd_params_present_flag")
                if subPic {
                    _ = try reader.readBits(8, "tick_divisor_minus2")
                    _ = try reader.readBits(5, "du_cpb_removal_delay_increment_length_minus1")
                    _ = try reader.readFlag("sub_pic_cpb_params_in_pic_timing_sei_flag")
                    _ = try reader.readBits(5, "dpb_output_delay_du_length_minus1")
                }
                bitRateScale = try reader.readBits(4, "bit_rate_scale")
                cpbSizeScale = try reader.readBits(4, "cpb_size_scale")
                if subPic { _ = try reader.readBits(4, "cpb_size_du_scale") }
                lengths = (try reader.readBits(5, "initial_cpb_removal_delay_length_minus1"),
                           try reader.readBits(5, "au_cpb_removal_delay_length_minus1"),
                           try reader.readBits(5, "dpb_output_delay_length_minus1"))
            }
        }
        var subLayers: [SubLayer] = []
        for i in 0...maxNumSubLayersMinus1 {
            let general = try reader.readFlag("fixed_pic_rate_general_flag[\(i)]")
            let withinCvs = general ? true : try reader.readFlag("fixed_pic_rate_within_cvs_flag[\(i)]")
            var duration = 0, lowDelay = false
            if withinCvs {
                duration = try reader.readUE("elemental_duration_in_tc_minus1[\(i)]", tolerating: 0...2047)
            } else {
                lowDelay = try reader.readFlag("low_delay_hrd_flag[\(i)]")
            }
            let cpbCnt = lowDelay ? 0 : try reader.readUE("cpb_cnt_minus1[\(i)]", max: 31)
            let nalBuffers = nal ? try Self.readBuffers(&reader, count: cpbCnt + 1, subPic: subPic) : nil
            let vclBuffers = vcl ? try Self.readBuffers(&reader, count: cpbCnt + 1, subPic: subPic) : nil
            subLayers.append(SubLayer(fixedPicRateGeneralFlag: general, fixedPicRateWithinCvsFlag: withinCvs,
                                      elementalDurationInTcMinus1: duration, lowDelayHrdFlag: lowDelay,
                                      cpbCntMinus1: cpbCnt, nalCodedPictureBuffers: nalBuffers,
                                      vclCodedPictureBuffers: vclBuffers))
        }
        nalHrdParametersPresentFlag = nal
        vclHrdParametersPresentFlag = vcl
        subPicHrdParamsPresentFlag = subPic
        self.bitRateScale = bitRateScale
        self.cpbSizeScale = cpbSizeScale
        (initialCpbRemovalDelayLengthMinus1, auCpbRemovalDelayLengthMinus1, dpbOutputDelayLengthMinus1) = lengths
        self.subLayers = subLayers
    }

    /// `sub_layer_hrd_parameters()` (clause E.2.3): `count` buffers.
    private static func readBuffers(_ reader: inout BitReader, count: Int, subPic: Bool) throws(MediaError) -> [CodedPictureBuffer] {
        var buffers: [CodedPictureBuffer] = []
        for i in 0..<count {
            let bitRate = try reader.readUE("bit_rate_value_minus1[\(i)]")
            let cpbSize = try reader.readUE("cpb_size_value_minus1[\(i)]")
            var duSize = 0, duRate = 0
            if subPic {
                duSize = try reader.readUE("cpb_size_du_value_minus1[\(i)]")
                duRate = try reader.readUE("bit_rate_du_value_minus1[\(i)]")
            }
            buffers.append(CodedPictureBuffer(bitRateValueMinus1: bitRate, cpbSizeValueMinus1: cpbSize,
                                              cpbSizeDuValueMinus1: duSize, bitRateDuValueMinus1: duRate,
                                              cbrFlag: try reader.readFlag("cbr_flag[\(i)]")))
        }
        return buffers
    }

    /// The NAL HRD's bit rate of buffer `i` of sub-layer `subLayer` in bits per second
    /// (equation E-37), when signalled.
    public func bitRate(subLayer: Int, buffer i: Int) -> Int? {
        guard subLayer >= 0, subLayer < subLayers.count, let buffers = subLayers[subLayer].nalCodedPictureBuffers,
              i >= 0, i < buffers.count else { return nil }
        return (buffers[i].bitRateValueMinus1 + 1) << (6 + bitRateScale)
    }
}
