import Testing
import H264
import HEVC
import H264TestSupport

/// Short-term reference picture sets in the SPS, inter-RPS prediction above all (none of the
/// shared streams carries sets in its SPS: x265 codes them in slice headers), and the bounds.
@Suite(.ownThread) struct HEVCReferencePictureSetTests {
    /// A 64x64 Main SPS (profile compatible with Main 10, level 3.1) whose
    /// `num_short_term_ref_pic_sets` is `count` and whose sets `sets` writes.
    static func sps(count: Int, sets: (inout BitWriter) -> Void) -> [UInt8] {
        var w = BitWriter()
        w.bits(0, 1); w.bits(33, 6); w.bits(0, 6); w.bits(1, 3) // nal_unit_header: SPS, layer 0, tid 0
        w.bits(0, 4); w.bits(0, 3); w.bit(true) // vps id, max_sub_layers_minus1, temporal_id_nesting
        w.bits(0, 2); w.bit(false); w.bits(1, 5); w.bits(0x6000_0000, 32) // space, tier, Main, compatible 1 and 2
        w.bits(0b1001, 4); w.bits(0, 7); w.bit(false); w.bits(0, 24); w.bits(0, 11); w.bit(false) // constraints, inbld
        w.bits(93, 8) // general_level_idc
        w.ue(0); w.ue(1); w.ue(64); w.ue(64); w.bit(false) // sps id, 4:2:0, 64x64, no conformance window
        w.ue(0); w.ue(0); w.ue(4) // bit depths 8, log2_max_pic_order_cnt_lsb_minus4
        w.bit(true); w.ue(4); w.ue(2); w.ue(0) // sub-layer ordering
        w.ue(0); w.ue(1); w.ue(0); w.ue(2); w.ue(0); w.ue(0) // CB 8…16, TB 4…16, hierarchy depths
        w.bit(false); w.bit(false); w.bit(false); w.bit(false) // scaling lists, AMP, SAO, PCM
        w.ue(count)
        sets(&w)
        w.bit(false); w.bit(false); w.bit(false); w.bit(false); w.bit(false) // LT, TMVP, smoothing, VUI, extension
        w.trailingBits()
        return RBSP.encode(w.bytes)
    }

    /// Set 0 coded explicitly: S0 {−1, −3} used, S1 {+2} not used.
    static func explicitSet(_ w: inout BitWriter) {
        w.ue(2); w.ue(1)
        w.ue(0); w.bit(true); w.ue(1); w.bit(true)
        w.ue(1); w.bit(false)
    }

    /// Set 1 predicted from set 0 with deltaRps = −1 gives (equations 7-61, 7-62) S0 {−1, −2, −4}
    /// used {1, 1, 0} and S1 {+1} used, worked out by hand from clause 7.4.8.
    @Test func interRPSPredictionResolvesAsClause7_4_8() throws {
        let nal = Self.sps(count: 2) { w in
            Self.explicitSet(&w)
            w.bit(true) // inter_ref_pic_set_prediction_flag (no delta_idx_minus1 inside the SPS)
            w.bit(true); w.ue(0) // delta_rps_sign, abs_delta_rps_minus1: deltaRps = −1
            w.bit(true) // j0: −1 → −2, used
            w.bit(false); w.bit(true) // j1: −3 → −4, not used, kept
            w.bit(true) // j2: +2 → +1, used
            w.bit(true) // j3: the reference picture itself, −1, used
        }
        let sps = try HEVCSequenceParameterSet(nalUnit: nal)
        #expect(sps.diagnostics.isEmpty)
        let sets = sps.shortTermRefPicSets
        #expect(sets.count == 2)
        #expect(sets[0].deltaPocS0 == [-1, -3] && sets[0].usedByCurrPicS0 == [true, true])
        #expect(sets[0].deltaPocS1 == [2] && sets[0].usedByCurrPicS1 == [false])
        #expect(sets[1].interRefPicSetPredictionFlag)
        #expect(sets[1].deltaPocS0 == [-1, -2, -4] && sets[1].usedByCurrPicS0 == [true, true, false])
        #expect(sets[1].deltaPocS1 == [1] && sets[1].usedByCurrPicS1 == [true])
        let names = try HEVCSequenceParameterSet.syntaxElements(nalUnit: nal).map(\.name)
        #expect(names.contains("inter_ref_pic_set_prediction_flag") && names.contains("use_delta_flag[1]")
            && names.contains("used_by_curr_pic_flag[3]") && !names.contains("delta_idx_minus1"))
    }

    /// Out-of-range counts are errors that name their field; a predicted set of more than 15
    /// pictures too.
    @Test func boundsAreErrorsNamingTheirField() {
        let cases: [(String, MediaError.Code, String, [UInt8])] = [
            ("65 sets", .valueOutOfRange, "num_short_term_ref_pic_sets", Self.sps(count: 65) { _ in }),
            ("16 negative pictures", .valueOutOfRange, "num_negative_pics", Self.sps(count: 1) { w in w.ue(16); w.ue(0) }),
            ("10 + 6 pictures", .valueOutOfRange, "num_positive_pics", Self.sps(count: 1) { w in w.ue(10); w.ue(6) }),
            ("a predicted set of 16", .valueOutOfRange, "use_delta_flag", Self.sps(count: 2) { w in
                w.ue(15); w.ue(0)
                for _ in 0..<15 { w.ue(0); w.bit(true) }
                w.bit(true); w.bit(true); w.ue(99) // predicted, deltaRps = −100
                for _ in 0...15 { w.bit(true) } // every picture used
            }),
            ("cut short in the set count", .truncated, "num_short_term_ref_pic_sets", Array(Self.sps(count: 1) { _ in }.dropLast())),
        ]
        for (label, code, field, nal) in cases {
            do {
                _ = try HEVCSequenceParameterSet(nalUnit: nal)
                Issue.record("\(label): accepted")
            } catch {
                #expect(error.code == code && error.field == field, "\(label): \(error)")
            }
        }
    }
}
