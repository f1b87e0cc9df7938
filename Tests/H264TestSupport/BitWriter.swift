/// Writes bits and Exp-Golomb codes, for building test NAL units by hand.
public struct BitWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    private var bitCount = 0

    public init() {}

    /// How many bits have been written: the bit offset of the next one.
    public var bitPosition: Int { bitCount }

    public mutating func bit(_ value: Bool) { bits(value ? 1 : 0, 1) }

    public mutating func bits(_ value: Int, _ count: Int) {
        guard count > 0 else { return }
        for shift in stride(from: count - 1, through: 0, by: -1) {
            let bit = UInt8((value >> shift) & 1)
            if bitCount % 8 == 0 { bytes.append(0) }
            bytes[bytes.count - 1] |= bit << UInt8(7 - bitCount % 8)
            bitCount += 1
        }
    }

    /// ue(v).
    public mutating func ue(_ value: Int) {
        let codeNum = value + 1
        let length = Int.bitWidth - codeNum.leadingZeroBitCount
        bits(0, length - 1)
        bits(codeNum, length)
    }

    /// se(v).
    public mutating func se(_ value: Int) {
        ue(value > 0 ? 2 * value - 1 : -2 * value)
    }

    /// rbsp_trailing_bits().
    public mutating func trailingBits() {
        bits(1, 1)
        while bitCount % 8 != 0 { bits(0, 1) }
    }

    /// A NAL unit: the header byte, then these bits with emulation prevention inserted.
    public func nalUnit(type: Int, refIdc: Int = 3) -> [UInt8] {
        [UInt8((refIdc << 5) | type)] + escaped(bytes)
    }

    private func escaped(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2 && byte <= 3 { out.append(3); zeros = 0 }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }
}

/// Hand-built parameter sets and slices (Baseline-style, CAVLC).
public enum SyntheticStream {
    /// A Baseline SPS: 16x16 macroblocks wide/high as given, POC type 0, frame_mbs_only.
    /// `vui`, when given, writes `vui_parameters()`.
    public static func sps(id: Int = 0, widthInMbs: Int = 2, heightInMbs: Int = 2, pocType: Int = 0, frameMbsOnly: Bool = true,
                           vui: ((inout BitWriter) -> Void)? = nil) -> [UInt8] {
        var w = BitWriter()
        w.bits(66, 8)            // profile_idc
        w.bits(0b1100_0000, 8)   // constraint flags + reserved_zero_2bits
        w.bits(30, 8)            // level_idc
        w.ue(id)                 // seq_parameter_set_id
        w.ue(0)                  // log2_max_frame_num_minus4
        w.ue(pocType)            // pic_order_cnt_type
        if pocType == 0 { w.ue(0) } // log2_max_pic_order_cnt_lsb_minus4
        w.ue(1)                  // max_num_ref_frames
        w.bit(false)             // gaps_in_frame_num_value_allowed_flag
        w.ue(widthInMbs - 1)
        w.ue(heightInMbs - 1)
        w.bit(frameMbsOnly)
        if !frameMbsOnly { w.bit(false) }
        w.bit(true)              // direct_8x8_inference_flag
        w.bit(false)             // frame_cropping_flag
        w.bit(vui != nil)        // vui_parameters_present_flag
        vui?(&w)
        w.trailingBits()
        return w.nalUnit(type: 7)
    }

    /// `vui_parameters()` with only a bitstream restriction: `log2_max_mv_length_horizontal` as
    /// given (16 was allowed by the 2003 and 2005 editions, 15 is the limit since).
    public static func bitstreamRestrictionVUI(log2MaxMvLengthHorizontal: Int) -> (inout BitWriter) -> Void {
        { w in
            for _ in 0..<8 { w.bit(false) } // aspect ratio … pic_struct_present_flag (no HRD)
            w.bit(true)                     // bitstream_restriction_flag
            w.bit(true)                     // motion_vectors_over_pic_boundaries_flag
            w.ue(2); w.ue(1)                // max_bytes_per_pic_denom, max_bits_per_mb_denom
            w.ue(log2MaxMvLengthHorizontal)
            w.ue(15)                        // log2_max_mv_length_vertical
            w.ue(0); w.ue(1)                // max_num_reorder_frames, max_dec_frame_buffering
        }
    }

    /// A PPS naming `spsId`.
    public static func pps(id: Int = 0, spsId: Int = 0, redundantPicCntPresent: Bool = false) -> [UInt8] {
        var w = BitWriter()
        w.ue(id); w.ue(spsId)
        w.bit(false)   // entropy_coding_mode_flag
        w.bit(false)   // bottom_field_pic_order_in_frame_present_flag
        w.ue(0)        // num_slice_groups_minus1
        w.ue(0); w.ue(0)
        w.bit(false); w.bits(0, 2)
        w.se(0); w.se(0); w.se(0)
        w.bit(true)    // deblocking_filter_control_present_flag
        w.bit(false)   // constrained_intra_pred_flag
        w.bit(redundantPicCntPresent)
        w.trailingBits()
        return w.nalUnit(type: 8)
    }

    /// A slice NAL unit whose header (for SPS/PPS as built above, POC type 0) has the given
    /// fields; the slice data is a few filler bits.
    public static func slice(idr: Bool, firstMb: Int = 0, frameNum: Int = 0, pocLsb: Int = 0, idrPicId: Int = 0,
                             ppsId: Int = 0, refIdc: Int = 3, redundantPicCnt: Int? = nil) -> [UInt8] {
        var w = BitWriter()
        w.ue(firstMb)
        w.ue(idr ? 7 : 5)   // slice_type I or P (all slices same type)
        w.ue(ppsId)
        w.bits(frameNum, 4)
        if idr { w.ue(idrPicId) }
        w.bits(pocLsb, 4)
        if let redundantPicCnt { w.ue(redundantPicCnt) }
        w.bits(0b1011_0110, 8)  // stand-in for the rest of the slice
        w.trailingBits()
        return w.nalUnit(type: idr ? 5 : 1, refIdc: refIdc)
    }
}
