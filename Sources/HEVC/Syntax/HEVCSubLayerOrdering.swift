public import MediaCore

/// One sub-layer's decoded picture buffer needs, as the VPS (`vps_max_*[i]`) and the SPS
/// (`sps_max_*[i]`) signal them (clauses 7.4.3.1 and 7.4.3.2.1).
public struct HEVCSubLayerOrdering: Hashable, Sendable {
    /// `*_max_dec_pic_buffering_minus1[i]`, 0…15.
    public let maxDecPicBufferingMinus1: Int
    /// `*_max_num_reorder_pics[i]`, 0…`maxDecPicBufferingMinus1`: how many pictures may precede
    /// another in decoding order and follow it in output order (the decoder's reorder depth).
    public let maxNumReorderPics: Int
    /// `*_max_latency_increase_plus1[i]`.
    public let maxLatencyIncreasePlus1: Int

    /// Reads the loop of clause 7.3.2.1 or 7.3.2.2 for sub-layers 0…`maxSubLayersMinus1`
    /// (`prefix` `vps` or `sps`). Without `infoPresent` only the highest is coded and the others
    /// take its values. Values out of range are kept with a warning.
    static func read(_ reader: inout BitReader, prefix: String, maxSubLayersMinus1: Int,
                     infoPresent: Bool) throws(MediaError) -> [HEVCSubLayerOrdering] {
        var result: [HEVCSubLayerOrdering] = []
        for i in (infoPresent ? 0 : maxSubLayersMinus1)...maxSubLayersMinus1 {
            let buffering = try reader.readUE("\(prefix)_max_dec_pic_buffering_minus1[\(i)]", tolerating: 0...15)
            let reorder = try reader.readUE("\(prefix)_max_num_reorder_pics[\(i)]", tolerating: 0...buffering)
            let latency = try reader.readUE("\(prefix)_max_latency_increase_plus1[\(i)]")
            result.append(HEVCSubLayerOrdering(maxDecPicBufferingMinus1: buffering, maxNumReorderPics: reorder,
                                               maxLatencyIncreasePlus1: latency))
        }
        if !infoPresent, let highest = result.first {
            result = Array(repeating: highest, count: maxSubLayersMinus1 + 1)
        }
        return result
    }
}
