import H264
import H264TestSupport

// MARK: - Builders (clause 7.3.2.1.1 and 7.3.2.2, field by field)

/// A sequence parameter set written element by element; defaults give a valid Baseline SPS of
/// 176x144, POC type 0. Each property is the element of the same spec name.
struct SPS {
    var profileIdc = 66
    var constraintByte = 0xC0                 // constraint_set0…5_flag, reserved_zero_2bits
    var levelIdc = 30
    var id = 0
    var idBits: ((inout BitWriter) -> Void)?
    var chromaFormatIdc = 1
    var bitDepthLumaMinus8 = 0
    var firstDeltaScale: Int?
    var log2MaxFrameNumMinus4 = 0
    var picOrderCntType = 0
    var log2MaxPicOrderCntLsbMinus4 = 0
    var pocCycle = 0
    var pocCycleWritten: Int?
    var stopAfterPOC = false
    var maxNumRefFrames = 1
    var picWidthInMbsMinus1 = 10
    var picHeightInMapUnitsMinus1 = 8
    var crop: (Int, Int, Int, Int)?
    var vui: ((inout BitWriter) -> Void)?
    var missingStopBit = false

    var nalUnit: [UInt8] {
        var w = BitWriter()
        w.bits(profileIdc, 8)
        w.bits(constraintByte, 8)             // constraint_set0/1_flag, the rest 0
        w.bits(levelIdc, 8)                   // level_idc
        if let idBits { idBits(&w) } else { w.ue(id) }
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profileIdc) {
            w.ue(chromaFormatIdc)
            if chromaFormatIdc == 3 { w.bit(false) }
            w.ue(bitDepthLumaMinus8)
            w.ue(0)                           // bit_depth_chroma_minus8
            w.bit(false)                      // qpprime_y_zero_transform_bypass_flag
            if let firstDeltaScale {
                w.bit(true)                   // seq_scaling_matrix_present_flag
                w.bit(true)                   // seq_scaling_list_present_flag[0]
                w.se(firstDeltaScale)         // delta_scale[0]
                for _ in 1..<8 { w.bit(false) } // seq_scaling_list_present_flag[1…7]
            } else {
                w.bit(false)
            }
        }
        w.ue(log2MaxFrameNumMinus4)
        w.ue(picOrderCntType)
        if picOrderCntType == 0 { w.ue(log2MaxPicOrderCntLsbMinus4) }
        if picOrderCntType == 1 {
            w.bit(false); w.se(0); w.se(0)    // delta_pic_order_always_zero_flag, offsets
            w.ue(pocCycle)
            for _ in 0..<(pocCycleWritten ?? pocCycle) { w.se(1) }
            if stopAfterPOC { return [0x67] + RBSP.encode(w.bytes) }
        }
        w.ue(maxNumRefFrames)
        w.bit(false)                          // gaps_in_frame_num_value_allowed_flag
        w.ue(picWidthInMbsMinus1)
        w.ue(picHeightInMapUnitsMinus1)
        w.bit(true)                           // frame_mbs_only_flag
        w.bit(true)                           // direct_8x8_inference_flag
        if let crop {
            w.bit(true); w.ue(crop.0); w.ue(crop.1); w.ue(crop.2); w.ue(crop.3)
        } else {
            w.bit(false)
        }
        if let vui { w.bit(true); vui(&w) } else { w.bit(false) }
        if missingStopBit { w.bit(false) } // a 0 where rbsp_stop_one_bit belongs
        w.trailingBits()
        return w.nalUnit(type: 7)
    }
}

/// A picture parameter set written element by element; defaults give a valid CAVLC PPS.
struct PPS {
    var id = 0
    var spsId = 0
    var numSliceGroupsMinus1 = 0
    var sliceGroupMapType = 0
    var numRefIdxL0Minus1 = 0
    var weightedBipredIdc = 0
    var picInitQpMinus26 = 0
    var chromaQpIndexOffset = 0
    var transform8x8WithScalingMatrix = false

    var nalUnit: [UInt8] {
        var w = BitWriter()
        w.ue(id)
        w.ue(spsId)
        w.bit(false)                          // entropy_coding_mode_flag
        w.bit(false)                          // bottom_field_pic_order_in_frame_present_flag
        w.ue(numSliceGroupsMinus1)
        if numSliceGroupsMinus1 > 0 { w.ue(sliceGroupMapType) }
        w.ue(numRefIdxL0Minus1)
        w.ue(0)                               // num_ref_idx_l1_default_active_minus1
        w.bit(false)                          // weighted_pred_flag
        w.bits(weightedBipredIdc, 2)
        w.se(picInitQpMinus26)
        w.se(0)                               // pic_init_qs_minus26
        w.se(chromaQpIndexOffset)
        w.bit(true); w.bit(false); w.bit(false)
        if transform8x8WithScalingMatrix {
            w.bit(true); w.bit(true)          // transform_8x8_mode_flag, pic_scaling_matrix_present_flag
            for _ in 0..<8 { w.bit(false) }
            w.se(0)
        }
        w.trailingBits()
        return w.nalUnit(type: 8)
    }
}
