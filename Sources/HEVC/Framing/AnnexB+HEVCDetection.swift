public import MediaCore

extension AnnexB {
    /// True when an Annex-B byte stream carries H.265 rather than H.264, told from its NAL unit
    /// headers alone (as FFmpeg's `hevc_probe` tells it): every NAL unit's two header bytes
    /// have `forbidden_zero_bit` 0, `nuh_layer_id` 0 and `nuh_temporal_id_plus1` at least 1,
    /// and a VPS, an SPS and a PPS are among them. An H.264 stream fails at once: its SPS
    /// header byte (`0x67`), its AUD (`0x09`) and its slices read as a layer above 0.
    ///
    /// Only the beginning is read: the first `nalUnitLimit` NAL units within the first MiB, so
    /// that telling the codec of a long file costs nothing beside reading it.
    ///
    /// - Parameters:
    ///   - bytes: the stream, or its beginning.
    ///   - nalUnitLimit: how many NAL units to look at, at most.
    public static func carriesHEVC(_ bytes: [UInt8], nalUnitLimit: Int = 64) -> Bool {
        codec(ofStreamBeginning: bytes, isComplete: true, nalUnitLimit: nalUnitLimit) == .hevc
    }

    /// The codec of an Annex-B byte stream, told from its beginning by the rule of
    /// `carriesHEVC(_:nalUnitLimit:)`, or nil while the bytes so far cannot tell: every header
    /// read as H.265 but neither `nalUnitLimit` NAL units nor 1 MiB have come. So that a live
    /// stream is not held for 64 NAL units, an unfinished stream is H.265 as soon as its VPS,
    /// SPS and PPS and the first slice of an IRAP picture have come with valid headers. A
    /// streaming reader appends bytes and asks again.
    ///
    /// - Parameters:
    ///   - bytes: the stream's first bytes.
    ///   - isComplete: true when `bytes` is the whole stream (the answer is then never nil).
    ///   - nalUnitLimit: how many NAL units to look at, at most.
    public static func codec(ofStreamBeginning bytes: [UInt8], isComplete: Bool, nalUnitLimit: Int = 64) -> VideoCodec? {
        let window = Swift.min(bytes.count, 1 << 20)
        let locations = bytes.withUnsafeBytes { nalUnits(in: UnsafeRawBufferPointer(rebasing: $0.prefix(window))) }
        var seen = Set<HEVCNALUnitType>()
        for (index, location) in locations.prefix(nalUnitLimit).enumerated() {
            let unit = bytes[location.range]
            guard unit.count >= HEVCNALUnitHeader.byteCount else {
                // The last unit of an unfinished stream may still be arriving.
                return !isComplete && index == locations.count - 1 ? nil : .h264
            }
            let header = HEVCNALUnitHeader(unit[unit.startIndex], unit[unit.startIndex + 1])
            guard header.forbiddenZeroBit == 0, header.nuhLayerId == 0, header.nuhTemporalIdPlus1 > 0 else { return .h264 }
            seen.insert(header.nalUnitType)
        }
        let parameterSets = seen.isSuperset(of: [.videoParameterSet, .sequenceParameterSet, .pictureParameterSet])
        let finished = isComplete || locations.count >= nalUnitLimit || window == 1 << 20
        if parameterSets && (finished || seen.contains(where: \.isIRAP)) { return .hevc }
        return finished ? .h264 : nil
    }
}
