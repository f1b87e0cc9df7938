public import MediaCore
/// A picture parameter set, `pic_parameter_set_rbsp()` (clause 7.3.2.2, semantics 7.4.2.2).
///
/// Parsed from a whole NAL unit of type 8. Every element is read in clause 7.3 order and
/// range-checked as it is read; values absent from the bitstream hold what the semantics infer.
public struct PictureParameterSet: Hashable, Sendable {
    /// `pic_parameter_set_id`, 0…255.
    public let picParameterSetId: Int
    /// `seq_parameter_set_id`, 0…31: the SPS this PPS refers to.
    public let seqParameterSetId: Int
    /// `entropy_coding_mode_flag`: CABAC when true, CAVLC when false.
    public let entropyCodingModeFlag: Bool
    /// `bottom_field_pic_order_in_frame_present_flag`.
    public let bottomFieldPicOrderInFramePresentFlag: Bool
    /// `num_slice_groups_minus1`, 0…7.
    public let numSliceGroupsMinus1: Int
    /// `slice_group_map_type`, 0…6 (with slice groups); 0 otherwise.
    public let sliceGroupMapType: Int
    /// `run_length_minus1[iGroup]` (map type 0), one per slice group.
    public let runLengthMinus1: [Int]
    /// `top_left[iGroup]` (map type 2), one per slice group but the last.
    public let topLeft: [Int]
    /// `bottom_right[iGroup]` (map type 2), one per slice group but the last.
    public let bottomRight: [Int]
    /// `slice_group_change_direction_flag` (map types 3–5); false otherwise.
    public let sliceGroupChangeDirectionFlag: Bool
    /// `slice_group_change_rate_minus1` (map types 3–5); 0 otherwise.
    public let sliceGroupChangeRateMinus1: Int
    /// `pic_size_in_map_units_minus1` (map type 6); 0 otherwise.
    public let picSizeInMapUnitsMinus1: Int
    /// `slice_group_id[i]` (map type 6), one per map unit.
    public let sliceGroupId: [Int]
    /// `num_ref_idx_l0_default_active_minus1`, 0…31.
    public let numRefIdxL0DefaultActiveMinus1: Int
    /// `num_ref_idx_l1_default_active_minus1`, 0…31.
    public let numRefIdxL1DefaultActiveMinus1: Int
    /// `weighted_pred_flag`.
    public let weightedPredFlag: Bool
    /// `weighted_bipred_idc`, 0…2.
    public let weightedBipredIdc: Int
    /// `pic_init_qp_minus26`, −(26 + 6 × `bit_depth_luma_minus8`)…25.
    public let picInitQpMinus26: Int
    /// `pic_init_qs_minus26`, −26…25 (a value outside is kept with a warning: only SP and SI
    /// slices use it).
    public let picInitQsMinus26: Int
    /// `chroma_qp_index_offset`, −12…12.
    public let chromaQpIndexOffset: Int
    /// `deblocking_filter_control_present_flag`.
    public let deblockingFilterControlPresentFlag: Bool
    /// `constrained_intra_pred_flag`.
    public let constrainedIntraPredFlag: Bool
    /// `redundant_pic_cnt_present_flag`.
    public let redundantPicCntPresentFlag: Bool
    /// `transform_8x8_mode_flag`; false when absent.
    public let transform8x8ModeFlag: Bool
    /// `pic_scaling_matrix_present_flag`; false when absent.
    public let picScalingMatrixPresentFlag: Bool
    /// The coded picture scaling lists (6, 8 or 12): nil where `pic_scaling_list_present_flag[i]`
    /// is 0; empty without a picture scaling matrix.
    public let picScalingLists: [ScalingList?]
    /// `second_chroma_qp_index_offset`, −12…12; equal to `chroma_qp_index_offset` when absent.
    public let secondChromaQpIndexOffset: Int
    /// Tolerable problems met while parsing (values out of range in elements that do not change
    /// how the rest is read), each with the code, field and bit offset an error would have.
    public let diagnostics: [MediaError]

    /// Parses a picture parameter set NAL unit.
    ///
    /// The referenced SPS is looked up in `sequenceParameterSets` (keyed by
    /// `seq_parameter_set_id`). It is required only when the PPS codes scaling lists with
    /// `transform_8x8_mode_flag` set (their number depends on `chroma_format_idc`); when it is
    /// known it also narrows range checks (`pic_init_qp_minus26` by the luma bit depth, slice
    /// group map units by the picture size). Without it, `pic_init_qp_minus26` may go down to
    /// −62 (the lowest any bit depth allows).
    ///
    /// - Parameters:
    ///   - nalUnit: the whole NAL unit, header byte included, emulation prevention bytes present.
    ///   - sequenceParameterSets: known sequence parameter sets by id.
    /// - Throws: `MediaError` — as ``SequenceParameterSet/init(nalUnit:)``, plus
    ///   `MediaError.Code.missingParameterSet` (field `seq_parameter_set_id`) when the SPS is
    ///   needed but not given.
    public init(nalUnit: some Collection<UInt8>, sequenceParameterSets: [Int: SequenceParameterSet] = [:]) throws(MediaError) {
        var reader = BitReader(try RBSP.decodeNALUnit(nalUnit))
        try self.init(reader: &reader, sequenceParameterSets: sequenceParameterSets)
    }

    /// Every syntax element of a picture parameter set NAL unit in bitstream order, starting with
    /// the header's `forbidden_zero_bit`, `nal_ref_idc` and `nal_unit_type` and ending with the
    /// RBSP trailing bits — FFmpeg's `trace_headers` names (see `SyntaxElement`).
    ///
    /// - Throws: the errors of ``init(nalUnit:sequenceParameterSets:)``.
    public static func syntaxElements(nalUnit: some Collection<UInt8>,
                                      sequenceParameterSets: [Int: SequenceParameterSet] = [:]) throws(MediaError) -> [SyntaxElement] {
        var reader = BitReader(try RBSP.decodeNALUnit(nalUnit), recordsElements: true)
        _ = try PictureParameterSet(reader: &reader, sequenceParameterSets: sequenceParameterSets)
        return reader.syntaxElements
    }

    private init(reader: inout BitReader, sequenceParameterSets: [Int: SequenceParameterSet]) throws(MediaError) {
        try reader.readNALUnitHeader(expecting: .pictureParameterSet)
        picParameterSetId = try reader.readUE("pic_parameter_set_id", max: 255)
        let spsIdAt = reader.bitOffset
        seqParameterSetId = try reader.readUE("seq_parameter_set_id", max: 31)
        let sps = sequenceParameterSets[seqParameterSetId]
        entropyCodingModeFlag = try reader.readFlag("entropy_coding_mode_flag")
        bottomFieldPicOrderInFramePresentFlag = try reader.readFlag("bottom_field_pic_order_in_frame_present_flag")
        numSliceGroupsMinus1 = try reader.readUE("num_slice_groups_minus1", max: 7)

        var mapType = 0, runLength: [Int] = [], topLeft: [Int] = [], bottomRight: [Int] = []
        var changeDirection = false, changeRate = 0, mapUnits = 0, groupIds: [Int] = []
        if numSliceGroupsMinus1 > 0 {
            // Map unit addresses lie below PicSizeInMapUnits when the SPS is known.
            let maxUnit = sps.map { $0.picSizeInMapUnits - 1 } ?? Int(UInt32.max - 1)
            mapType = try reader.readUE("slice_group_map_type", max: 6)
            switch mapType {
            case 0:
                for group in 0...numSliceGroupsMinus1 {
                    runLength.append(try reader.readUE("run_length_minus1[\(group)]", max: maxUnit))
                }
            case 2:
                for group in 0..<numSliceGroupsMinus1 {
                    let left = try reader.readUE("top_left[\(group)]", max: maxUnit)
                    topLeft.append(left)
                    bottomRight.append(try reader.readUE("bottom_right[\(group)]", range: left...Swift.max(left, maxUnit)))
                }
            case 3, 4, 5:
                changeDirection = try reader.readFlag("slice_group_change_direction_flag")
                changeRate = try reader.readUE("slice_group_change_rate_minus1", max: maxUnit)
            case 6:
                let exact = sps.map { ($0.picSizeInMapUnits - 1)...($0.picSizeInMapUnits - 1) }
                mapUnits = try reader.readUE("pic_size_in_map_units_minus1", range: exact ?? 0...Int(UInt32.max - 1))
                // Ceil(Log2(num_slice_groups_minus1 + 1)) bits per map unit.
                let bits = Int.bitWidth - numSliceGroupsMinus1.leadingZeroBitCount
                guard (mapUnits + 1) * bits <= reader.bitsRemaining else {
                    throw MediaError(.truncated, field: "slice_group_id[0]", bitOffset: reader.bitOffset,
                                    "\(mapUnits + 1) slice_group_id values of \(bits) bits do not fit in \(reader.bitsRemaining) bits")
                }
                groupIds.reserveCapacity(mapUnits + 1)
                for i in 0...mapUnits {
                    let at = reader.bitOffset
                    let id = try reader.readBits(bits, "slice_group_id[\(i)]")
                    guard id <= numSliceGroupsMinus1 else {
                        throw MediaError(.valueOutOfRange, field: "slice_group_id[\(i)]", bitOffset: at,
                                        "\(id) is outside 0...\(numSliceGroupsMinus1)")
                    }
                    groupIds.append(id)
                }
            default:
                break
            }
        }
        sliceGroupMapType = mapType
        runLengthMinus1 = runLength
        self.topLeft = topLeft
        self.bottomRight = bottomRight
        sliceGroupChangeDirectionFlag = changeDirection
        sliceGroupChangeRateMinus1 = changeRate
        picSizeInMapUnitsMinus1 = mapUnits
        sliceGroupId = groupIds

        numRefIdxL0DefaultActiveMinus1 = try reader.readUE("num_ref_idx_l0_default_active_minus1", max: 31)
        numRefIdxL1DefaultActiveMinus1 = try reader.readUE("num_ref_idx_l1_default_active_minus1", max: 31)
        weightedPredFlag = try reader.readFlag("weighted_pred_flag")
        let bipredAt = reader.bitOffset
        weightedBipredIdc = try reader.readBits(2, "weighted_bipred_idc")
        guard weightedBipredIdc <= 2 else {
            throw MediaError(.valueOutOfRange, field: "weighted_bipred_idc", bitOffset: bipredAt, "3 is outside 0...2")
        }
        let qpMin = -(26 + 6 * (sps?.bitDepthLumaMinus8 ?? 6))
        picInitQpMinus26 = try reader.readSE("pic_init_qp_minus26", range: qpMin...25)
        // Used only by SP and SI slices, never to read the rest: out of range, kept with a warning.
        let qsAt = reader.bitOffset
        picInitQsMinus26 = try reader.readSE("pic_init_qs_minus26")
        if !(-26...25).contains(picInitQsMinus26) {
            reader.warn(.valueOutOfRange, "pic_init_qs_minus26", at: qsAt, "\(picInitQsMinus26) is outside -26...25 (kept)")
        }
        chromaQpIndexOffset = try reader.readSE("chroma_qp_index_offset", range: -12...12)
        deblockingFilterControlPresentFlag = try reader.readFlag("deblocking_filter_control_present_flag")
        constrainedIntraPredFlag = try reader.readFlag("constrained_intra_pred_flag")
        redundantPicCntPresentFlag = try reader.readFlag("redundant_pic_cnt_present_flag")

        if reader.moreRBSPData() {
            transform8x8ModeFlag = try reader.readFlag("transform_8x8_mode_flag")
            picScalingMatrixPresentFlag = try reader.readFlag("pic_scaling_matrix_present_flag")
            if picScalingMatrixPresentFlag {
                var count = 6
                if transform8x8ModeFlag {
                    guard let sps else {
                        throw MediaError(.missingParameterSet, field: "seq_parameter_set_id", bitOffset: spsIdAt,
                                        "SPS \(seqParameterSetId) is needed for the number of scaling lists but is not known")
                    }
                    count += sps.chromaFormatIdc == 3 ? 6 : 2
                }
                picScalingLists = try ScalingList.readLists(from: &reader, count: count, flagName: "pic_scaling_list_present_flag")
            } else {
                picScalingLists = []
            }
            secondChromaQpIndexOffset = try reader.readSE("second_chroma_qp_index_offset", range: -12...12)
        } else {
            transform8x8ModeFlag = false
            picScalingMatrixPresentFlag = false
            picScalingLists = []
            secondChromaQpIndexOffset = chromaQpIndexOffset
        }
        try reader.readTrailingBits()
        diagnostics = reader.diagnostics
    }
}

extension PictureParameterSet {
    /// True when the picture is split into more than one slice group (FMO, Baseline/Extended only).
    public var usesSliceGroups: Bool { numSliceGroupsMinus1 > 0 }
    /// The number of slice groups, `num_slice_groups_minus1 + 1`.
    public var numSliceGroups: Int { numSliceGroupsMinus1 + 1 }
    /// `pic_scaling_list_present_flag[i]` for each coded list (empty without a scaling matrix).
    public var picScalingListPresentFlag: [Bool] { picScalingLists.map { $0 != nil } }

    /// The scaling lists in effect for pictures using this PPS with `sps` (clause 7.4.2.2):
    /// the sequence's lists when `pic_scaling_matrix_present_flag` is 0, otherwise the coded
    /// lists with fall-back rule A (the SPS has no scaling matrix) or B (it has) of Table 7-2.
    public func scalingMatrix(sequenceParameterSet sps: SequenceParameterSet) -> ScalingMatrix {
        guard picScalingMatrixPresentFlag else { return sps.scalingMatrix }
        return ScalingMatrix.resolving(picScalingLists, fallback: sps.seqScalingMatrixPresentFlag ? sps.scalingMatrix : nil)
    }
}
