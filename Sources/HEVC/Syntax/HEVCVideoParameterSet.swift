public import MediaCore

/// A video parameter set, `video_parameter_set_rbsp()` (ITU-T H.265 clause 7.3.2.1, semantics
/// 7.4.3.1).
///
/// Parsed from a whole NAL unit of type 32. Every element is read in clause 7.3 order and
/// range-checked as it is read; values that do not change how the rest is read are kept with a
/// warning in ``diagnostics``. The VPS extension (`vps_extension_flag`) is skipped.
public struct HEVCVideoParameterSet: HEVCNALUnitSyntax, Hashable, Sendable {
    /// `vps_video_parameter_set_id`, 0…15.
    public let vpsVideoParameterSetId: Int
    /// `vps_base_layer_internal_flag`.
    public let vpsBaseLayerInternalFlag: Bool
    /// `vps_base_layer_available_flag`.
    public let vpsBaseLayerAvailableFlag: Bool
    /// `vps_max_layers_minus1`, 0…62.
    public let vpsMaxLayersMinus1: Int
    /// `vps_max_sub_layers_minus1`, 0…6.
    public let vpsMaxSubLayersMinus1: Int
    /// `vps_temporal_id_nesting_flag`.
    public let vpsTemporalIdNestingFlag: Bool
    /// `profile_tier_level(1, vps_max_sub_layers_minus1)`.
    public let profileTierLevel: HEVCProfileTierLevel
    /// `vps_sub_layer_ordering_info_present_flag`.
    public let vpsSubLayerOrderingInfoPresentFlag: Bool
    /// `vps_max_dec_pic_buffering_minus1[i]`, `vps_max_num_reorder_pics[i]` and
    /// `vps_max_latency_increase_plus1[i]` for each sub-layer (inferred from the highest when
    /// only it is signalled).
    public let subLayerOrdering: [HEVCSubLayerOrdering]
    /// `vps_max_layer_id`, 0…62.
    public let vpsMaxLayerId: Int
    /// `vps_num_layer_sets_minus1`, 0…1023.
    public let vpsNumLayerSetsMinus1: Int
    /// `vps_num_units_in_tick`, when `vps_timing_info_present_flag` is 1.
    public let numUnitsInTick: Int?
    /// `vps_time_scale`, when `vps_timing_info_present_flag` is 1.
    public let timeScale: Int?
    /// The HRDs (`hrd_parameters(cprms_present_flag[i], vps_max_sub_layers_minus1)`), one for
    /// each of `vps_num_hrd_parameters`.
    public let hrdParameters: [HEVCHRDParameters]
    /// `vps_extension_flag` (the extension data is skipped).
    public let vpsExtensionFlag: Bool
    /// Tolerable problems met while parsing, in bitstream order (see
    /// ``HEVCSequenceParameterSet/diagnostics``).
    public let diagnostics: [MediaError]

    /// Parses a VPS NAL unit (both header bytes first, emulation prevention bytes still
    /// present), with the errors of ``HEVCSequenceParameterSet/init(nalUnit:)`` (`unexpectedNALUnitType`
    /// for a type other than 32).
    public init(nalUnit: some Collection<UInt8>) throws(MediaError) { self = try Self.read(nalUnit: nalUnit) }

    /// The VPS's syntax elements in bitstream order, FFmpeg's `trace_headers` names (see
    /// ``HEVCSequenceParameterSet/syntaxElements(nalUnit:)``).
    public static func syntaxElements(nalUnit: some Collection<UInt8>) throws(MediaError) -> [SyntaxElement] { try elements(nalUnit: nalUnit) }

    init(reader: inout BitReader) throws(MediaError) {
        try reader.readHEVCNALUnitHeader(expecting: .videoParameterSet)
        vpsVideoParameterSetId = try reader.readBits(4, "vps_video_parameter_set_id")
        vpsBaseLayerInternalFlag = try reader.readFlag("vps_base_layer_internal_flag")
        vpsBaseLayerAvailableFlag = try reader.readFlag("vps_base_layer_available_flag")
        vpsMaxLayersMinus1 = try reader.readBits(6, "vps_max_layers_minus1", tolerating: { $0 < 63 }, "0...62")
        let subLayersAt = reader.bitOffset
        vpsMaxSubLayersMinus1 = try reader.readBits(3, "vps_max_sub_layers_minus1")
        if vpsMaxSubLayersMinus1 > 6 {
            throw MediaError(.valueOutOfRange, field: "vps_max_sub_layers_minus1", bitOffset: subLayersAt, "7 is outside 0...6")
        }
        vpsTemporalIdNestingFlag = try reader.readFlag("vps_temporal_id_nesting_flag")
        _ = try reader.readBits(16, "vps_reserved_0xffff_16bits", tolerating: { $0 == 0xFFFF }, "0xffff")
        profileTierLevel = try HEVCProfileTierLevel(reader: &reader, profilePresentFlag: true,
                                                     maxNumSubLayersMinus1: vpsMaxSubLayersMinus1)
        vpsSubLayerOrderingInfoPresentFlag = try reader.readFlag("vps_sub_layer_ordering_info_present_flag")
        subLayerOrdering = try HEVCSubLayerOrdering.read(&reader, prefix: "vps", maxSubLayersMinus1: vpsMaxSubLayersMinus1,
                                                         infoPresent: vpsSubLayerOrderingInfoPresentFlag)
        vpsMaxLayerId = try reader.readBits(6, "vps_max_layer_id", tolerating: { $0 < 63 }, "0...62")
        vpsNumLayerSetsMinus1 = try reader.readUE("vps_num_layer_sets_minus1", max: 1023)
        if vpsNumLayerSetsMinus1 > 0 {
            for i in 1...vpsNumLayerSetsMinus1 {
                for j in 0...vpsMaxLayerId { _ = try reader.readFlag("layer_id_included_flag[\(i)][\(j)]") }
            }
        }
        var timing: (units: Int?, scale: Int?, hrd: [HEVCHRDParameters]) = (nil, nil, [])
        if try reader.readFlag("vps_timing_info_present_flag") {
            timing.units = try reader.readBits(32, "vps_num_units_in_tick", tolerating: { $0 > 0 }, "1...4294967295")
            timing.scale = try reader.readBits(32, "vps_time_scale", tolerating: { $0 > 0 }, "1...4294967295")
            if try reader.readFlag("vps_poc_proportional_to_timing_flag") {
                _ = try reader.readUE("vps_num_ticks_poc_diff_one_minus1")
            }
            let count = try reader.readUE("vps_num_hrd_parameters", max: vpsNumLayerSetsMinus1 + 1)
            for i in 0..<count {
                let lowest = vpsBaseLayerInternalFlag ? 0 : 1
                _ = try reader.readUE("hrd_layer_set_idx[\(i)]", tolerating: lowest...max(lowest, vpsNumLayerSetsMinus1))
                let common = i > 0 ? try reader.readFlag("cprms_present_flag[\(i)]") : true
                timing.hrd.append(try HEVCHRDParameters(reader: &reader, commonInfPresentFlag: common,
                                                        maxNumSubLayersMinus1: vpsMaxSubLayersMinus1))
            }
        }
        (numUnitsInTick, timeScale, hrdParameters) = timing
        vpsExtensionFlag = try reader.readFlag("vps_extension_flag")
        try reader.readTrailingBits(unlessSkipped: vpsExtensionFlag)
        diagnostics = reader.diagnostics
    }

    /// The picture rate the VPS timing signals, `vps_time_scale / vps_num_units_in_tick`.
    public var frameRate: FrameRate? {
        guard let numUnitsInTick, let timeScale, numUnitsInTick > 0, timeScale > 0 else { return nil }
        return FrameRate(numerator: timeScale, denominator: numUnitsInTick)
    }
}
