public import MediaCore

extension HEVCSequenceParameterSet {
    /// `SubWidthC` (Table 6-1): the conformance window's horizontal unit in luma samples.
    public var subWidthC: Int { HEVCChromaFormat.subsampling(chromaFormatIdc: chromaFormatIdc, separateColourPlane: separateColourPlaneFlag).width }
    /// `SubHeightC` (Table 6-1): the conformance window's vertical unit in luma samples.
    public var subHeightC: Int { HEVCChromaFormat.subsampling(chromaFormatIdc: chromaFormatIdc, separateColourPlane: separateColourPlaneFlag).height }
    /// `ChromaArrayType`: 0 with separate colour planes, otherwise `chroma_format_idc`.
    public var chromaArrayType: Int { separateColourPlaneFlag ? 0 : chromaFormatIdc }

    /// The width of the decoded picture in luma samples, `pic_width_in_luma_samples`.
    public var codedWidth: Int { picWidthInLumaSamples }
    /// The height of the decoded picture in luma samples, `pic_height_in_luma_samples`.
    public var codedHeight: Int { picHeightInLumaSamples }
    /// The width of the output picture: the coded width less the conformance window
    /// (`SubWidthC` × (`conf_win_left_offset` + `conf_win_right_offset`)).
    public var displayWidth: Int { codedWidth - subWidthC * (conformanceWindow.leftOffset + conformanceWindow.rightOffset) }
    /// The height of the output picture: the coded height less the conformance window
    /// (`SubHeightC` × (`conf_win_top_offset` + `conf_win_bottom_offset`)).
    public var displayHeight: Int { codedHeight - subHeightC * (conformanceWindow.topOffset + conformanceWindow.bottomOffset) }

    /// `BitDepthY`: 8…16.
    public var bitDepthLuma: Int { 8 + bitDepthLumaMinus8 }
    /// `BitDepthC`: 8…16.
    public var bitDepthChroma: Int { 8 + bitDepthChromaMinus8 }

    /// `MinCbLog2SizeY`.
    public var minCbLog2SizeY: Int { log2MinLumaCodingBlockSizeMinus3 + 3 }
    /// `CtbLog2SizeY`: the coding tree block size's log2, 3…6.
    public var ctbLog2SizeY: Int { minCbLog2SizeY + log2DiffMaxMinLumaCodingBlockSize }
    /// `PicSizeInCtbsY`: how many coding tree blocks a picture holds.
    public var picSizeInCtbsY: Int {
        let ctb = 1 << ctbLog2SizeY
        return ((codedWidth + ctb - 1) / ctb) * ((codedHeight + ctb - 1) / ctb)
    }

    /// `MaxPicOrderCntLsb`: 2^(`log2_max_pic_order_cnt_lsb_minus4` + 4).
    public var maxPicOrderCntLsb: Int { 1 << (log2MaxPicOrderCntLsbMinus4 + 4) }

    /// `sps_max_num_reorder_pics` of the highest sub-layer: how many pictures a decoder holds
    /// back to output in order.
    public var maxNumReorderPics: Int { subLayerOrdering.last?.maxNumReorderPics ?? 0 }

    /// The general profile's `general_profile_idc` (0 when the SPS carries none).
    public var generalProfileIdc: Int { profileTierLevel.general?.profileIdc ?? 0 }
    /// `general_level_idc`: thirty times the level number.
    public var generalLevelIdc: Int { profileTierLevel.generalLevelIdc }

    /// The profile's name as FFmpeg prints it: `Main`, `Main 10`, `Main Still Picture`, `Rext`
    /// (format range extensions: Main 12, 4:2:2, 4:4:4 …), `SCC`, or `Unknown`.
    public var profileName: String {
        switch generalProfileIdc {
        case 1: "Main"
        case 2: "Main 10"
        case 3: "Main Still Picture"
        case 4: "Rext"
        case 9: "SCC"
        default: "Unknown"
        }
    }

    /// The picture rate the VUI timing signals, `vui_time_scale / vui_num_units_in_tick`
    /// (a field rate when `field_seq_flag` is 1); nil without timing.
    public var frameRate: FrameRate? {
        guard let vui = vuiParameters, let units = vui.numUnitsInTick, let scale = vui.timeScale, units > 0, scale > 0 else {
            return nil
        }
        return FrameRate(numerator: scale, denominator: units)
    }
}
