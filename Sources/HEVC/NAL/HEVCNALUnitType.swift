/// The type of an H.265 NAL unit: `nal_unit_type`, 0…63 (ITU-T H.265 Table 7-1).
///
/// All 64 values are representable; reserved and unspecified values survive a round trip and
/// have a name (``name``) as Table 7-1 gives it.
public struct HEVCNALUnitType: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The 6-bit `nal_unit_type` value.
    public let rawValue: UInt8

    /// Creates a type from a value; only the low 6 bits are kept.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x3F }

    /// 0: trailing picture, not used for reference by pictures of the same sub-layer.
    public static let trailN = HEVCNALUnitType(rawValue: 0)
    /// 1: trailing picture.
    public static let trailR = HEVCNALUnitType(rawValue: 1)
    /// 2: temporal sub-layer access picture, non-reference.
    public static let tsaN = HEVCNALUnitType(rawValue: 2)
    /// 3: temporal sub-layer access picture.
    public static let tsaR = HEVCNALUnitType(rawValue: 3)
    /// 4: step-wise temporal sub-layer access picture, non-reference.
    public static let stsaN = HEVCNALUnitType(rawValue: 4)
    /// 5: step-wise temporal sub-layer access picture.
    public static let stsaR = HEVCNALUnitType(rawValue: 5)
    /// 6: random access decodable leading picture, non-reference.
    public static let radlN = HEVCNALUnitType(rawValue: 6)
    /// 7: random access decodable leading picture.
    public static let radlR = HEVCNALUnitType(rawValue: 7)
    /// 8: random access skipped leading picture, non-reference.
    public static let raslN = HEVCNALUnitType(rawValue: 8)
    /// 9: random access skipped leading picture.
    public static let raslR = HEVCNALUnitType(rawValue: 9)
    /// 16: broken link access picture that may have leading pictures.
    public static let blaWLP = HEVCNALUnitType(rawValue: 16)
    /// 17: broken link access picture that may have RADL leading pictures.
    public static let blaWRADL = HEVCNALUnitType(rawValue: 17)
    /// 18: broken link access picture without leading pictures.
    public static let blaNLP = HEVCNALUnitType(rawValue: 18)
    /// 19: instantaneous decoding refresh picture that may have RADL leading pictures.
    public static let idrWRADL = HEVCNALUnitType(rawValue: 19)
    /// 20: instantaneous decoding refresh picture without leading pictures.
    public static let idrNLP = HEVCNALUnitType(rawValue: 20)
    /// 21: clean random access picture (x265's default open GOP starts with one).
    public static let cra = HEVCNALUnitType(rawValue: 21)
    /// 32: video parameter set.
    public static let videoParameterSet = HEVCNALUnitType(rawValue: 32)
    /// 33: sequence parameter set.
    public static let sequenceParameterSet = HEVCNALUnitType(rawValue: 33)
    /// 34: picture parameter set.
    public static let pictureParameterSet = HEVCNALUnitType(rawValue: 34)
    /// 35: access unit delimiter.
    public static let accessUnitDelimiter = HEVCNALUnitType(rawValue: 35)
    /// 36: end of sequence.
    public static let endOfSequence = HEVCNALUnitType(rawValue: 36)
    /// 37: end of bitstream.
    public static let endOfBitstream = HEVCNALUnitType(rawValue: 37)
    /// 38: filler data.
    public static let fillerData = HEVCNALUnitType(rawValue: 38)
    /// 39: prefix supplemental enhancement information.
    public static let prefixSEI = HEVCNALUnitType(rawValue: 39)
    /// 40: suffix supplemental enhancement information.
    public static let suffixSEI = HEVCNALUnitType(rawValue: 40)

    /// True for types 0…31: the NAL unit carries a coded slice segment (Video Coding Layer),
    /// reserved VCL types included.
    public var isVCL: Bool { rawValue < 32 }

    /// True for types 16…23: an intra random access point picture (BLA, IDR, CRA and the
    /// reserved IRAP types 22 and 23). A keyframe is any IRAP picture, not only an IDR.
    public var isIRAP: Bool { rawValue >= 16 && rawValue <= 23 }

    /// True for types 19 and 20 (IDR_W_RADL, IDR_N_LP).
    public var isIDR: Bool { rawValue == 19 || rawValue == 20 }

    /// True for types 16…18 (BLA_W_LP, BLA_W_RADL, BLA_N_LP).
    public var isBLA: Bool { rawValue >= 16 && rawValue <= 18 }

    /// True for types 6…9: RADL or RASL leading pictures.
    public var isLeadingPicture: Bool { rawValue >= 6 && rawValue <= 9 }

    /// True for VPS, SPS and PPS (types 32…34).
    public var isParameterSet: Bool { rawValue >= 32 && rawValue <= 34 }

    /// True for the types 48…63 that H.265 leaves unspecified (RTP uses 48, 49 and 50).
    public var isUnspecified: Bool { rawValue >= 48 }

    /// True for a VCL type that is a sub-layer non-reference picture (clause 7.4.2.2): the even
    /// types below 15 (TRAIL_N, TSA_N, STSA_N, RADL_N, RASL_N, RSV_VCL_N10/12/14).
    public var isSubLayerNonReference: Bool { rawValue <= 14 && rawValue & 1 == 0 }

    /// The name Table 7-1 gives the type, e.g. `"IDR_W_RADL"`, `"RSV_VCL_N10"` or `"UNSPEC48"`.
    public var name: String {
        switch rawValue {
        case 0...9: Self.vclNames[Int(rawValue)]
        case 10...15: (rawValue & 1 == 0 ? "RSV_VCL_N" : "RSV_VCL_R") + String(rawValue)
        case 16...21: Self.irapNames[Int(rawValue) - 16]
        case 22, 23: "RSV_IRAP_VCL\(rawValue)"
        case 24...31: "RSV_VCL\(rawValue)"
        case 32...40: Self.nonVCLNames[Int(rawValue) - 32]
        case 41...47: "RSV_NVCL\(rawValue)"
        default: "UNSPEC\(rawValue)"
        }
    }

    private static let vclNames = ["TRAIL_N", "TRAIL_R", "TSA_N", "TSA_R", "STSA_N", "STSA_R",
                                   "RADL_N", "RADL_R", "RASL_N", "RASL_R"]
    private static let irapNames = ["BLA_W_LP", "BLA_W_RADL", "BLA_N_LP", "IDR_W_RADL", "IDR_N_LP", "CRA_NUT"]
    private static let nonVCLNames = ["VPS_NUT", "SPS_NUT", "PPS_NUT", "AUD_NUT", "EOS_NUT", "EOB_NUT",
                                      "FD_NUT", "PREFIX_SEI_NUT", "SUFFIX_SEI_NUT"]

    /// The number and the name, e.g. `"19 (IDR_W_RADL)"`.
    public var description: String { "\(rawValue) (\(name))" }

    /// Orders types by value.
    public static func < (lhs: HEVCNALUnitType, rhs: HEVCNALUnitType) -> Bool { lhs.rawValue < rhs.rawValue }
}
