public import MediaCore
extension SequenceParameterSet {
    /// How many frames a decoder may have to hold back to output pictures in order: the VUI's
    /// `max_num_reorder_frames` when the SPS has a bitstream restriction; 0 for
    /// `pic_order_cnt_type` 2 (output order is decode order, clause 8.2.1.3); otherwise the
    /// level's `MaxDpbFrames` (clause A.3.1, `MaxDpbMbs / (PicWidthInMbs × FrameHeightInMbs)`,
    /// at most 16), the most a conforming stream can need.
    ///
    /// Told to libavcodec before the first picture (its `has_b_frames`), this is what FFmpeg's
    /// command-line tool learns by probing the stream first: without it, libavcodec starts with
    /// no reorder delay and drops the pictures it finds out of order when reordering shows up.
    /// ``PresentationOrder`` looks this many access units ahead.
    public var maximumReorderDepth: Int {
        if let reorder = vuiParameters?.maxNumReorderFrames { return min(reorder, 15) }
        if picOrderCntType == 2 { return 0 }
        let maxDpbMbs: Int = switch levelIdc {
        case 9, 10: 396
        case 11: constraintSet3Flag && profileIdc <= 77 ? 396 : 900
        case 12, 13, 20: 2_376
        case 21: 4_752
        case 22, 30: 8_100
        case 31: 18_000
        case 32: 20_480
        case 40, 41: 32_768
        case 42: 34_816
        case 50: 110_400
        case 51, 52: 184_320
        default: 696_320
        }
        return min(maxDpbMbs / max(frameSizeInMbs, 1), 15)
    }

    /// The reorder depth for an access unit: from its format's SPS, else from an SPS it
    /// carries in band; nil when neither is known.
    package static func reorderDepth(format: FormatDescription?, avcc: [UInt8], lengthSize: Int) -> Int? {
        if let sps = format?.sequenceParameterSet { return sps.maximumReorderDepth }
        guard let units = try? AVCC.read(avcc, lengthSize: lengthSize).nalUnits else { return nil }
        for range in units where !range.isEmpty && NALUnitType(rawValue: avcc[range.lowerBound]) == .sequenceParameterSet {
            if let sps = try? SequenceParameterSet(nalUnit: avcc[range]) { return sps.maximumReorderDepth }
        }
        return nil
    }
}
