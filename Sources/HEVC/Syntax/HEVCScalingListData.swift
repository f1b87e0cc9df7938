public import MediaCore

/// `scaling_list_data()` (ITU-T H.265 clause 7.3.4, semantics 7.4.5) as coded, in an SPS or a PPS.
///
/// Lists are kept as coded rather than resolved into matrices: each is either a copy of an
/// earlier list (or of the default, Tables 7-5 and 7-6) or explicit coefficients.
public struct HEVCScalingListData: Hashable, Sendable {
    /// One coded list, for `sizeId` 0…3 (4×4 to 32×32) and `matrixId` 0…5 (0 and 3 only for 32×32).
    public enum List: Hashable, Sendable {
        /// `scaling_list_pred_mode_flag` 0: the list equals the one `scaling_list_pred_matrix_id_delta`
        /// before it in the same size (0: the default list).
        case predicted(matrixIdDelta: Int)
        /// `scaling_list_pred_mode_flag` 1: `scaling_list_dc_coef_minus8` (16×16 and 32×32 only,
        /// else nil) and the `ScalingList` coefficients in up-right diagonal scan order.
        case explicit(dcCoefMinus8: Int?, coefficients: [Int])
    }

    /// The lists by `sizeId`: 6 lists for sizes 0…2, 2 (matrixId 0 and 3) for size 3.
    public let lists: [[List]]

    /// Reads `scaling_list_data()`. Coefficient deltas and references out of range do not change
    /// how the rest is read: they are kept with a warning.
    init(reader: inout BitReader) throws(MediaError) {
        var lists: [[List]] = []
        for sizeId in 0..<4 {
            var size: [List] = []
            for matrixId in stride(from: 0, to: 6, by: sizeId == 3 ? 3 : 1) {
                let index = "[\(sizeId)][\(matrixId)]"
                if !(try reader.readFlag("scaling_list_pred_mode_flag\(index)")) {
                    let maximum = sizeId == 3 ? matrixId / 3 : matrixId
                    size.append(.predicted(matrixIdDelta: try reader.readUE("scaling_list_pred_matrix_id_delta\(index)",
                                                                            tolerating: 0...maximum)))
                    continue
                }
                var dc: Int?
                if sizeId > 1 {
                    dc = try reader.readSE("scaling_list_dc_coef_minus8[\(sizeId - 2)][\(matrixId)]", tolerating: -7...247)
                }
                // Clause 7.3.4: each coefficient is the previous one plus the delta, modulo 256.
                var next = dc.map { $0 + 8 } ?? 8
                var coefficients: [Int] = []
                for i in 0..<min(64, 1 << (4 + (sizeId << 1))) {
                    let delta = try reader.readSE("scaling_list_delta_coeff\(index)[\(i)]", tolerating: -128...127)
                    next = ((next + delta) % 256 + 256) % 256
                    coefficients.append(next)
                }
                size.append(.explicit(dcCoefMinus8: dc, coefficients: coefficients))
            }
            lists.append(size)
        }
        self.lists = lists
    }
}
