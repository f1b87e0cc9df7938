public import MediaCore

/// A raw AAC-LC frame of digital silence, made without an encoder: what a stream that must carry
/// audio (an RTMP server expecting it, an HLS player waiting for both tracks) sends when it has
/// none. Every frame is the same few bytes; they decode to 1024 zero samples per channel at
/// whatever rate the `AudioSpecificConfig` names (``AudioSpecificConfig/init(audioObjectType:samplingFrequency:channelConfiguration:)``
/// with `channelConfiguration` 1 or 2).
///
/// The `raw_data_block()` is written element by element from ISO/IEC 14496-3 4.4.2.1 (Table
/// 4.3), with no spectral data at all:
/// - mono: a `single_channel_element()` (`id_syn_ele` `ID_SCE`, `element_instance_tag` 0),
/// - stereo: a `channel_pair_element()` (`ID_CPE`, `element_instance_tag` 0, `common_window`
///   0) holding two such channel streams,
///
/// each `individual_channel_stream()` a `global_gain`, an `ics_info()` with
/// `window_sequence` `ONLY_LONG_SEQUENCE`, `max_sfb` 0 and no predictor — so `section_data()`,
/// `scale_factor_data()` and `spectral_data()` are empty — and no pulse, TNS or gain-control
/// data; then `ID_END` and zero bits to the byte boundary. Mono is 4 bytes, stereo 7.
public enum AACSilence {
    /// The `global_gain` written (any value decodes to silence: no band carries a coefficient).
    public static let globalGain = 100

    /// The silent frame for `channelConfiguration` 1 (mono) or 2 (stereo).
    ///
    /// - Throws: `MediaError.Code.unsupported` (field `channelConfiguration`) for any other
    ///   configuration.
    public static func frame(channelConfiguration: Int) throws(MediaError) -> [UInt8] {
        // (element, value, bits), in the order of the syntax tables.
        var elements: [(name: String, value: Int, bits: Int)] = []
        switch channelConfiguration {
        case 1:
            elements += [("id_syn_ele", idSCE, 3), ("element_instance_tag", 0, 4)]
            elements += silentChannelStream
        case 2:
            elements += [("id_syn_ele", idCPE, 3), ("element_instance_tag", 0, 4), ("common_window", 0, 1)]
            elements += silentChannelStream + silentChannelStream
        default:
            throw MediaError(.unsupported, field: "channelConfiguration",
                             "a silent frame is made for channelConfiguration 1 or 2, not \(channelConfiguration)")
        }
        elements.append(("id_syn_ele", idEND, 3))
        return pack(elements)
    }

    /// `ID_SCE`, `ID_CPE` and `ID_END` (Table 4.85).
    static let idSCE = 0, idCPE = 1, idEND = 7

    /// An `individual_channel_stream(common_window 0, scale_flag 0)` without coefficients.
    static let silentChannelStream: [(name: String, value: Int, bits: Int)] = [
        ("global_gain", globalGain, 8),
        // ics_info()
        ("ics_reserved_bit", 0, 1),
        ("window_sequence", 0, 2),            // ONLY_LONG_SEQUENCE
        ("window_shape", 0, 1),
        ("max_sfb", 0, 6),                    // no scale factor band: section, scale factor and spectral data are empty
        ("predictor_data_present", 0, 1),
        // the rest of individual_channel_stream()
        ("pulse_data_present", 0, 1),
        ("tns_data_present", 0, 1),
        ("gain_control_data_present", 0, 1),
    ]

    /// The elements' bits, most significant first, then zero bits to the byte boundary
    /// (`byte_alignment()`).
    static func pack(_ elements: [(name: String, value: Int, bits: Int)]) -> [UInt8] {
        var output: [UInt8] = [], accumulator = 0, pending = 0
        for element in elements {
            for bit in stride(from: element.bits - 1, through: 0, by: -1) {
                accumulator = accumulator << 1 | (element.value >> bit & 1)
                pending += 1
                if pending == 8 { output.append(UInt8(accumulator)); accumulator = 0; pending = 0 }
            }
        }
        if pending > 0 { output.append(UInt8(accumulator << (8 - pending))) }
        return output
    }
}
