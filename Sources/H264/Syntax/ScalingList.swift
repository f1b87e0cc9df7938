public import MediaCore
/// One scaling list as coded by `scaling_list()` (clause 7.3.2.1.1.1): 16 weights for a 4x4
/// transform or 64 for an 8x8 transform, in the order they are coded (zig-zag or field scan
/// position, as Tables 7-3 and 7-4 list them).
public struct ScalingList: Hashable, Sendable {
    /// The weights in coded (scan) order: 16 or 64 values, each 1…255.
    public let values: [Int]
    /// `useDefaultScalingMatrixFlag` (clause 7.4.2.1.1.1): the first `delta_scale` made
    /// `nextScale` 0, which selects the default list of Table 7-3/7-4 instead of ``values``.
    public let useDefaultScalingMatrixFlag: Bool

    /// Creates a list from weights in coded order.
    public init(values: [Int], useDefaultScalingMatrixFlag: Bool = false) {
        self.values = values
        self.useDefaultScalingMatrixFlag = useDefaultScalingMatrixFlag
    }

    /// `Flat_4x4_16`: sixteen weights of 16 (clause 7.4.2.1.1).
    public static let flat4x4 = ScalingList(values: Array(repeating: 16, count: 16))
    /// `Flat_8x8_16`: sixty-four weights of 16 (clause 7.4.2.1.1).
    public static let flat8x8 = ScalingList(values: Array(repeating: 16, count: 64))
    /// `Default_4x4_Intra` (Table 7-3).
    public static let default4x4Intra = ScalingList(values: [6, 13, 13, 20, 20, 20, 28, 28, 28, 28, 32, 32, 32, 37, 37, 42])
    /// `Default_4x4_Inter` (Table 7-3).
    public static let default4x4Inter = ScalingList(values: [10, 14, 14, 20, 20, 20, 24, 24, 24, 24, 27, 27, 27, 30, 30, 34])
    /// `Default_8x8_Intra` (Table 7-4).
    public static let default8x8Intra = ScalingList(values: [
        6, 10, 10, 13, 11, 13, 16, 16, 16, 16, 18, 18, 18, 18, 18, 23,
        23, 23, 23, 23, 23, 25, 25, 25, 25, 25, 25, 25, 27, 27, 27, 27,
        27, 27, 27, 27, 29, 29, 29, 29, 29, 29, 29, 31, 31, 31, 31, 31,
        31, 33, 33, 33, 33, 33, 36, 36, 36, 36, 38, 38, 38, 40, 40, 42,
    ])
    /// `Default_8x8_Inter` (Table 7-4).
    public static let default8x8Inter = ScalingList(values: [
        9, 13, 13, 15, 13, 15, 17, 17, 17, 17, 19, 19, 19, 19, 19, 21,
        21, 21, 21, 21, 21, 22, 22, 22, 22, 22, 22, 22, 24, 24, 24, 24,
        24, 24, 24, 24, 25, 25, 25, 25, 25, 25, 25, 27, 27, 27, 27, 27,
        27, 28, 28, 28, 28, 28, 30, 30, 30, 30, 32, 32, 32, 33, 33, 35,
    ])

    /// The default list (Table 7-3/7-4) for list index `index` of the 12 lists of clause 7.3.2.1.1:
    /// 0–2 intra 4x4, 3–5 inter 4x4, then 8x8 lists alternating intra (6, 8, 10) and inter (7, 9, 11).
    package static func defaultList(index: Int) -> ScalingList {
        switch index {
        case 0..<3: return .default4x4Intra
        case 3..<6: return .default4x4Inter
        default: return index % 2 == 0 ? .default8x8Intra : .default8x8Inter
        }
    }

    /// Reads `scaling_list(ScalingList, sizeOfScalingList, useDefaultScalingMatrixFlag)`
    /// (clause 7.3.2.1.1.1). Elements are named `delta_scale[j]`, counted within the list; reading
    /// stops once `nextScale` becomes 0 and the remaining weights repeat the last one.
    package static func read(from reader: inout BitReader, size: Int) throws(MediaError) -> ScalingList {
        var values: [Int] = []
        values.reserveCapacity(size)
        var lastScale = 8
        var nextScale = 8
        var useDefault = false
        for j in 0..<size {
            if nextScale != 0 {
                let deltaScale = try reader.readSE("delta_scale[\(j)]", range: -128...127)
                nextScale = (lastScale + deltaScale + 256) % 256
                useDefault = j == 0 && nextScale == 0
            }
            let value = nextScale == 0 ? lastScale : nextScale
            values.append(value)
            lastScale = value
        }
        return ScalingList(values: values, useDefaultScalingMatrixFlag: useDefault)
    }

    /// Reads the `*_scaling_list_present_flag[i]` loop of an SPS or PPS with `count` lists.
    package static func readLists(from reader: inout BitReader, count: Int, flagName: String) throws(MediaError) -> [ScalingList?] {
        var lists: [ScalingList?] = []
        lists.reserveCapacity(count)
        for i in 0..<count {
            if try reader.readFlag("\(flagName)[\(i)]") {
                lists.append(try read(from: &reader, size: i < 6 ? 16 : 64))
            } else {
                lists.append(nil)
            }
        }
        return lists
    }
}

/// The twelve scaling lists in effect for a sequence or picture, after the fall-back rules of
/// Table 7-2 have been applied.
public struct ScalingMatrix: Hashable, Sendable {
    /// The six 4x4 lists: Intra Y, Intra Cb, Intra Cr, Inter Y, Inter Cb, Inter Cr.
    public let lists4x4: [ScalingList]
    /// The six 8x8 lists: Intra Y, Inter Y, Intra Cb, Inter Cb, Intra Cr, Inter Cr (only the
    /// first two are used unless `ChromaArrayType` is 3).
    public let lists8x8: [ScalingList]

    /// Creates a matrix from six 4x4 and six 8x8 lists.
    public init(lists4x4: [ScalingList], lists8x8: [ScalingList]) {
        self.lists4x4 = lists4x4
        self.lists8x8 = lists8x8
    }

    /// All lists `Flat_4x4_16` / `Flat_8x8_16`: what applies when no scaling matrix is coded.
    public static let flat = ScalingMatrix(lists4x4: Array(repeating: .flat4x4, count: 6),
                                           lists8x8: Array(repeating: .flat8x8, count: 6))

    /// The list with index `index` in the 0…11 numbering of Table 7-2.
    public subscript(index: Int) -> ScalingList {
        index < 6 ? lists4x4[index] : lists8x8[index - 6]
    }

    /// Resolves coded lists (nil = not present) with fall-back rule A (`fallback` nil: defaults
    /// of Tables 7-3/7-4) or rule B (`fallback` = the sequence-level matrix) of Table 7-2.
    package static func resolving(_ coded: [ScalingList?], fallback: ScalingMatrix?) -> ScalingMatrix {
        var lists: [ScalingList] = []
        lists.reserveCapacity(12)
        for index in 0..<12 {
            let list: ScalingList
            if index < coded.count, let present = coded[index] {
                list = present.useDefaultScalingMatrixFlag ? ScalingList.defaultList(index: index) : present
            } else if index == 0 || index == 3 || index == 6 || index == 7 {
                list = fallback?[index] ?? ScalingList.defaultList(index: index)
            } else if index < 6 {
                list = lists[index - 1]
            } else {
                list = lists[index - 2]
            }
            lists.append(list)
        }
        return ScalingMatrix(lists4x4: Array(lists[0..<6]), lists8x8: Array(lists[6..<12]))
    }
}
