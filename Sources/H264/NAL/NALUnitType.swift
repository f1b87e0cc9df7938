/// The type of a NAL unit: `nal_unit_type`, 0…31 (ITU-T H.264 Table 7-1).
///
/// All 32 values are representable; reserved and unspecified values survive a round trip.
public struct NALUnitType: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The 5-bit `nal_unit_type` value.
    public let rawValue: UInt8

    /// Creates a type from a value; only the low 5 bits are kept.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x1F }

    /// 0: unspecified.
    public static let unspecified0 = NALUnitType(rawValue: 0)
    /// 1: coded slice of a non-IDR picture.
    public static let slice = NALUnitType(rawValue: 1)
    /// 2: coded slice data partition A.
    public static let sliceDataPartitionA = NALUnitType(rawValue: 2)
    /// 3: coded slice data partition B.
    public static let sliceDataPartitionB = NALUnitType(rawValue: 3)
    /// 4: coded slice data partition C.
    public static let sliceDataPartitionC = NALUnitType(rawValue: 4)
    /// 5: coded slice of an IDR picture.
    public static let idrSlice = NALUnitType(rawValue: 5)
    /// 6: supplemental enhancement information (SEI).
    public static let sei = NALUnitType(rawValue: 6)
    /// 7: sequence parameter set.
    public static let sequenceParameterSet = NALUnitType(rawValue: 7)
    /// 8: picture parameter set.
    public static let pictureParameterSet = NALUnitType(rawValue: 8)
    /// 9: access unit delimiter.
    public static let accessUnitDelimiter = NALUnitType(rawValue: 9)
    /// 10: end of sequence.
    public static let endOfSequence = NALUnitType(rawValue: 10)
    /// 11: end of stream.
    public static let endOfStream = NALUnitType(rawValue: 11)
    /// 12: filler data.
    public static let fillerData = NALUnitType(rawValue: 12)
    /// 13: sequence parameter set extension.
    public static let sequenceParameterSetExtension = NALUnitType(rawValue: 13)
    /// 14: prefix NAL unit (SVC/MVC).
    public static let prefixNALUnit = NALUnitType(rawValue: 14)
    /// 15: subset sequence parameter set.
    public static let subsetSequenceParameterSet = NALUnitType(rawValue: 15)
    /// 16: depth parameter set.
    public static let depthParameterSet = NALUnitType(rawValue: 16)
    /// 19: coded slice of an auxiliary coded picture without partitioning.
    public static let auxiliarySlice = NALUnitType(rawValue: 19)
    /// 20: coded slice extension (SVC/MVC).
    public static let sliceExtension = NALUnitType(rawValue: 20)
    /// 21: coded slice extension for a depth view component.
    public static let sliceExtensionDepth = NALUnitType(rawValue: 21)

    /// True for types 1…5: the NAL unit carries coded slice data of the primary picture
    /// (Video Coding Layer).
    public var isVCL: Bool { rawValue >= 1 && rawValue <= 5 }

    /// True for types 1 and 5, whose payload begins with a slice header.
    public var isSlice: Bool { rawValue == 1 || rawValue == 5 }

    /// True for SPS and PPS (types 7 and 8).
    public var isParameterSet: Bool { rawValue == 7 || rawValue == 8 }

    /// True when Table 7-1 marks the value reserved (17, 18, 22, 23).
    public var isReserved: Bool { [17, 18, 22, 23].contains(rawValue) }

    /// True when Table 7-1 marks the value unspecified (0, 24…31).
    public var isUnspecified: Bool { rawValue == 0 || rawValue >= 24 }

    /// The name Table 7-1 gives the type.
    public var name: String {
        switch rawValue {
        case 0: return "Unspecified"
        case 1: return "Coded slice of a non-IDR picture"
        case 2: return "Coded slice data partition A"
        case 3: return "Coded slice data partition B"
        case 4: return "Coded slice data partition C"
        case 5: return "Coded slice of an IDR picture"
        case 6: return "Supplemental enhancement information (SEI)"
        case 7: return "Sequence parameter set"
        case 8: return "Picture parameter set"
        case 9: return "Access unit delimiter"
        case 10: return "End of sequence"
        case 11: return "End of stream"
        case 12: return "Filler data"
        case 13: return "Sequence parameter set extension"
        case 14: return "Prefix NAL unit"
        case 15: return "Subset sequence parameter set"
        case 16: return "Depth parameter set"
        case 17, 18, 22, 23: return "Reserved"
        case 19: return "Coded slice of an auxiliary coded picture without partitioning"
        case 20: return "Coded slice extension"
        case 21: return "Coded slice extension for a depth view component"
        default: return "Unspecified"
        }
    }

    /// A short name, e.g. `"IDR"`, `"SPS"`, `"non-IDR"`.
    public var shortName: String {
        switch rawValue {
        case 1: return "non-IDR"
        case 2: return "DPA"
        case 3: return "DPB"
        case 4: return "DPC"
        case 5: return "IDR"
        case 6: return "SEI"
        case 7: return "SPS"
        case 8: return "PPS"
        case 9: return "AUD"
        case 10: return "EOSeq"
        case 11: return "EOStream"
        case 12: return "Filler"
        case 13: return "SPS-ext"
        case 14: return "Prefix"
        case 15: return "Subset-SPS"
        case 16: return "DPS"
        case 19: return "Aux-slice"
        case 20: return "Slice-ext"
        case 21: return "Slice-ext-depth"
        case 17, 18, 22, 23: return "Reserved"
        default: return "Unspecified"
        }
    }

    /// `"<value> (<short name>)"`.
    public var description: String { "\(rawValue) (\(shortName))" }

    /// Orders types by their numeric value.
    public static func < (lhs: NALUnitType, rhs: NALUnitType) -> Bool { lhs.rawValue < rhs.rawValue }
}
