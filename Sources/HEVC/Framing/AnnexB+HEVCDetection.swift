public import H264

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
        let locations = bytes.withUnsafeBytes { nalUnits(in: UnsafeRawBufferPointer(rebasing: $0.prefix(1 << 20))) }
        var seen = Set<HEVCNALUnitType>()
        for location in locations.prefix(nalUnitLimit) {
            let unit = bytes[location.range]
            guard unit.count >= HEVCNALUnitHeader.byteCount else { return false }
            let header = HEVCNALUnitHeader(unit[unit.startIndex], unit[unit.startIndex + 1])
            guard header.forbiddenZeroBit == 0, header.nuhLayerId == 0, header.nuhTemporalIdPlus1 > 0 else { return false }
            seen.insert(header.nalUnitType)
        }
        return seen.isSuperset(of: [.videoParameterSet, .sequenceParameterSet, .pictureParameterSet])
    }
}
