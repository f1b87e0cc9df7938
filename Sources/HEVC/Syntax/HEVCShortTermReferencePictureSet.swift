public import MediaCore

/// A short-term reference picture set, `st_ref_pic_set(stRpsIdx)` (ITU-T H.265 clause 7.3.7,
/// semantics 7.4.8), kept in its resolved form: the picture order count differences of the
/// pictures before (``deltaPocS0``) and after (``deltaPocS1``) the current one.
///
/// A set coded with inter-RPS prediction (`inter_ref_pic_set_prediction_flag`) is resolved
/// from the set it refers to by equations 7-61 and 7-62, so that a later set (or a slice
/// header) may refer to it in turn.
public struct HEVCShortTermReferencePictureSet: Hashable, Sendable {
    /// `inter_ref_pic_set_prediction_flag`: the set was coded as a change of an earlier one.
    public let interRefPicSetPredictionFlag: Bool
    /// `DeltaPocS0[i]`: negative POC differences, closest first (`NumNegativePics` values).
    public let deltaPocS0: [Int]
    /// `UsedByCurrPicS0[i]`.
    public let usedByCurrPicS0: [Bool]
    /// `DeltaPocS1[i]`: positive POC differences, closest first (`NumPositivePics` values).
    public let deltaPocS1: [Int]
    /// `UsedByCurrPicS1[i]`.
    public let usedByCurrPicS1: [Bool]

    /// `NumNegativePics`.
    public var numNegativePics: Int { deltaPocS0.count }
    /// `NumPositivePics`.
    public var numPositivePics: Int { deltaPocS1.count }
    /// `NumDeltaPocs`.
    public var numDeltaPocs: Int { deltaPocS0.count + deltaPocS1.count }

    /// The most pictures a set may hold: `sps_max_dec_pic_buffering_minus1` is at most 15
    /// (`MaxDpbSize` − 1), and so are `num_negative_pics` + `num_positive_pics`.
    public static let maximumPictureCount = 15

    /// Reads `st_ref_pic_set(stRpsIdx)`.
    ///
    /// - Parameters:
    ///   - index: `stRpsIdx`; `earlier.count` for a set in a slice header.
    ///   - earlier: the SPS's sets before this one (`st_ref_pic_set(0…stRpsIdx−1)`).
    ///   - numShortTermRefPicSets: `num_short_term_ref_pic_sets`.
    /// - Throws: `MediaError.Code.valueOutOfRange` for a reference outside the earlier sets,
    ///   or a set of more than ``maximumPictureCount`` pictures; the bit reader's errors.
    init(reader: inout BitReader, index: Int, earlier: [HEVCShortTermReferencePictureSet],
         numShortTermRefPicSets: Int) throws(MediaError) {
        let predicted = index != 0 ? try reader.readFlag("inter_ref_pic_set_prediction_flag") : false
        interRefPicSetPredictionFlag = predicted
        guard predicted else {
            let negative = try reader.readUE("num_negative_pics", max: Self.maximumPictureCount)
            let positive = try reader.readUE("num_positive_pics", max: Self.maximumPictureCount - negative)
            (deltaPocS0, usedByCurrPicS0) = try Self.readDeltas(&reader, count: negative, sign: -1, list: "s0")
            (deltaPocS1, usedByCurrPicS1) = try Self.readDeltas(&reader, count: positive, sign: 1, list: "s1")
            return
        }
        let deltaIdxMinus1 = index == numShortTermRefPicSets
            ? try reader.readUE("delta_idx_minus1", range: 0...max(index - 1, 0)) : 0
        let refIndex = index - (deltaIdxMinus1 + 1)
        guard refIndex >= 0, refIndex < earlier.count else {
            throw MediaError(.valueOutOfRange, field: "delta_idx_minus1", bitOffset: reader.bitOffset,
                            "refers to set \(refIndex), \(earlier.count) known")
        }
        let ref = earlier[refIndex]
        let sign = try reader.readFlag("delta_rps_sign") ? -1 : 1
        let deltaRps = sign * (try reader.readUE("abs_delta_rps_minus1", max: 32767) + 1)
        var usedByCurrPic: [Bool] = [], useDelta: [Bool] = []
        for j in 0...ref.numDeltaPocs {
            let used = try reader.readFlag("used_by_curr_pic_flag[\(j)]")
            usedByCurrPic.append(used)
            useDelta.append(used ? true : try reader.readFlag("use_delta_flag[\(j)]"))
        }
        // Equations 7-61 and 7-62: the reference set's pictures moved by deltaRps, plus the
        // reference picture itself (at index NumDeltaPocs), each kept where use_delta_flag says.
        // j indexes the flags: S0 pictures first, then S1, then the reference picture.
        let shifted = ref.deltaPocS0.indices.map { (poc: ref.deltaPocS0[$0] + deltaRps, flag: $0) }
            + ref.deltaPocS1.indices.map { (poc: ref.deltaPocS1[$0] + deltaRps, flag: ref.numNegativePics + $0) }
        let itself = (poc: deltaRps, flag: ref.numDeltaPocs)
        // S0 in 7-61's order: S1 pictures from the farthest, the reference picture, S0 from the closest.
        let s0Order = shifted[ref.numNegativePics...].reversed() + [itself] + shifted[..<ref.numNegativePics]
        // S1 in 7-62's order: S0 pictures from the farthest, the reference picture, S1 from the closest.
        let s1Order = shifted[..<ref.numNegativePics].reversed() + [itself] + shifted[ref.numNegativePics...]
        let s0 = s0Order.filter { $0.poc < 0 && useDelta[$0.flag] }
        let s1 = s1Order.filter { $0.poc > 0 && useDelta[$0.flag] }
        guard s0.count + s1.count <= Self.maximumPictureCount else {
            throw MediaError(.valueOutOfRange, field: "use_delta_flag", bitOffset: reader.bitOffset,
                            "the predicted set holds \(s0.count + s1.count) pictures, at most \(Self.maximumPictureCount) allowed")
        }
        deltaPocS0 = s0.map(\.poc)
        usedByCurrPicS0 = s0.map { usedByCurrPic[$0.flag] }
        deltaPocS1 = s1.map(\.poc)
        usedByCurrPicS1 = s1.map { usedByCurrPic[$0.flag] }
    }

    /// Reads `count` pairs of `delta_poc_sX_minus1[i]` and `used_by_curr_pic_sX_flag[i]`,
    /// accumulating the differences (equations 7-63 to 7-66) away from 0 in the direction `sign`.
    private static func readDeltas(_ reader: inout BitReader, count: Int, sign: Int, list: String) throws(MediaError) -> ([Int], [Bool]) {
        var deltas: [Int] = [], used: [Bool] = []
        var poc = 0
        for i in 0..<count {
            poc += sign * (try reader.readUE("delta_poc_\(list)_minus1[\(i)]", max: 32767) + 1)
            deltas.append(poc)
            used.append(try reader.readFlag("used_by_curr_pic_\(list)_flag[\(i)]"))
        }
        return (deltas, used)
    }
}
