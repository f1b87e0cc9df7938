public import MediaCore

/// The `hvcC` box's payload, `HEVCDecoderConfigurationRecord` (ISO/IEC 14496-15 §8.3.3.1): the
/// stream's profile, tier, level and format, the NAL unit length size, and arrays of NAL units
/// (VPS, SPS, PPS and SEI) a decoder needs before the first sample.
///
/// With the `hvc1` sample entry the parameter sets are only here (each array's
/// ``NALUnitArray/arrayCompleteness`` is true); with `hev1` they may also be in the samples.
public struct HEVCDecoderConfigurationRecord: Hashable, Sendable {
    /// One array of NAL units of one type.
    public struct NALUnitArray: Hashable, Sendable {
        /// `array_completeness`: every NAL unit of this type is in the array (none in the samples).
        public var arrayCompleteness: Bool
        /// `NAL_unit_type`.
        public var nalUnitType: HEVCNALUnitType
        /// The NAL units, each with its two header bytes.
        public var nalUnits: [[UInt8]]

        /// Creates an array.
        public init(arrayCompleteness: Bool, nalUnitType: HEVCNALUnitType, nalUnits: [[UInt8]]) {
            self.arrayCompleteness = arrayCompleteness
            self.nalUnitType = nalUnitType
            self.nalUnits = nalUnits
        }
    }

    /// `configurationVersion`: 1.
    public var configurationVersion: Int
    /// `general_profile_space`.
    public var generalProfileSpace: Int
    /// `general_tier_flag`.
    public var generalTierFlag: Bool
    /// `general_profile_idc`.
    public var generalProfileIdc: Int
    /// `general_profile_compatibility_flags`, flag 0 in the highest bit.
    public var generalProfileCompatibilityFlags: UInt32
    /// `general_constraint_indicator_flags`: 48 bits.
    public var generalConstraintIndicatorFlags: UInt64
    /// `general_level_idc`.
    public var generalLevelIdc: Int
    /// `min_spatial_segmentation_idc`, 0…4095.
    public var minSpatialSegmentationIdc: Int
    /// `parallelismType`: 0 mixed or unknown, 1 slices, 2 tiles, 3 wavefront.
    public var parallelismType: Int
    /// `chromaFormat` (`chroma_format_idc`).
    public var chromaFormat: Int
    /// `bitDepthLumaMinus8`.
    public var bitDepthLumaMinus8: Int
    /// `bitDepthChromaMinus8`.
    public var bitDepthChromaMinus8: Int
    /// `avgFrameRate` in frames per 256 seconds; 0 when unspecified.
    public var avgFrameRate: Int
    /// `constantFrameRate`: 0 unknown, 1 constant, 2 constant per temporal layer.
    public var constantFrameRate: Int
    /// `numTemporalLayers`: 0 unknown, else the number of temporal layers.
    public var numTemporalLayers: Int
    /// `temporalIdNested`.
    public var temporalIdNested: Bool
    /// `lengthSizeMinusOne`: 0, 1 or 3.
    public var lengthSizeMinusOne: Int
    /// The NAL unit arrays, in order.
    public var arrays: [NALUnitArray]

    /// The size of the samples' NAL unit length prefixes: 1, 2 or 4.
    public var nalUnitLengthSize: Int { lengthSizeMinusOne + 1 }

    /// Every NAL unit of the arrays, in order: what `hevc_mp4toannexb` puts before each IRAP picture.
    public var nalUnits: [[UInt8]] { arrays.flatMap(\.nalUnits) }

    /// Builds a record from a stream's parameter sets (and any prefix SEI to carry), in the
    /// order given: the profile, tier and level come from the first SPS, the parallelism from
    /// the first PPS, as FFmpeg's `hvcC` writer takes them. A value wider than its field
    /// (`bitDepthLumaMinus8` of 16-bit samples, eight temporal layers, a
    /// `min_spatial_segmentation_idc` above 4,095) is the field's maximum.
    ///
    /// - Parameters:
    ///   - nalUnits: VPS, SPS, PPS and SEI NAL units (both header bytes first); other types are
    ///     left out.
    ///   - lengthSize: the samples' length prefix size: 1, 2 or 4.
    ///   - arrayCompleteness: the arrays' `array_completeness` (true for `hvc1`).
    /// - Throws: `MediaError.Code.missingParameterSet` without an SPS, the parse errors of
    ///   the SPS and PPS, `MediaError.Code.invalidLengthSize`.
    public init(parameterSets nalUnits: [[UInt8]], lengthSize: Int = 4, arrayCompleteness: Bool = true) throws(MediaError) {
        try AVCC.validate(lengthSize: lengthSize)
        var arrays: [NALUnitArray] = []
        var sps: HEVCSequenceParameterSet?, pps: HEVCPictureParameterSet?, vpsSubLayers = 0
        for unit in nalUnits {
            let type = try HEVCNALUnitHeader(validating: unit).nalUnitType
            switch type {
            case .videoParameterSet: vpsSubLayers = max(vpsSubLayers, try HEVCVideoParameterSet(nalUnit: unit).vpsMaxSubLayersMinus1 + 1)
            case .sequenceParameterSet: if sps == nil { sps = try HEVCSequenceParameterSet(nalUnit: unit) }
            case .pictureParameterSet: if pps == nil { pps = try HEVCPictureParameterSet(nalUnit: unit) }
            case .prefixSEI, .suffixSEI: break
            default: continue
            }
            if let index = arrays.firstIndex(where: { $0.nalUnitType == type }) {
                arrays[index].nalUnits.append(unit)
            } else {
                arrays.append(NALUnitArray(arrayCompleteness: arrayCompleteness, nalUnitType: type, nalUnits: [unit]))
            }
        }
        guard let sps else {
            throw MediaError(.missingParameterSet, field: "seq_parameter_set_rbsp", "an hvcC needs an SPS")
        }
        let general = sps.profileTierLevel.general
        configurationVersion = 1
        generalProfileSpace = general?.profileSpace ?? 0
        generalTierFlag = general?.tierFlag ?? false
        generalProfileIdc = general?.profileIdc ?? 0
        generalProfileCompatibilityFlags = general?.profileCompatibilityFlags ?? 0
        generalConstraintIndicatorFlags = general?.constraintIndicatorFlags ?? 0
        generalLevelIdc = sps.generalLevelIdc
        // A value beyond the field's 12 bits (kept by the SPS with a warning) is written as its maximum.
        minSpatialSegmentationIdc = min(sps.vuiParameters?.minSpatialSegmentationIdc ?? 0, 4095)
        parallelismType = switch (pps?.entropyCodingSyncEnabledFlag, pps?.tilesEnabledFlag) {
        case _ where minSpatialSegmentationIdc == 0: 0
        case (true, true): 0
        case (true, _): 3
        case (_, true): 2
        default: 1
        }
        chromaFormat = sps.chromaFormatIdc
        // The record's 3-bit fields hold 0…7: 16-bit samples (bit_depth_luma_minus8 = 8, RExt)
        // and eight sub-layers cannot be written; they are written as the field's maximum, so that
        // the record reads back as it was built (FFmpeg's writer masks them to 0).
        bitDepthLumaMinus8 = min(sps.bitDepthLumaMinus8, 7)
        bitDepthChromaMinus8 = min(sps.bitDepthChromaMinus8, 7)
        avgFrameRate = 0
        constantFrameRate = 0
        numTemporalLayers = min(max(vpsSubLayers, sps.spsMaxSubLayersMinus1 + 1), 7)
        temporalIdNested = sps.spsTemporalIdNestingFlag
        lengthSizeMinusOne = lengthSize - 1
        self.arrays = arrays
    }

    /// Parses a record (the `hvcC` box's payload).
    ///
    /// - Throws: `MediaError.Code.invalidConfigurationRecord` for a version above 1 or a
    ///   length size of 3 bytes, `MediaError.Code.truncated` when the data ends early; the
    ///   error's `field` names the field and `byteOffset` where it begins.
    public init(parsing bytes: [UInt8]) throws(MediaError) {
        var reader = BitReader(bytes)
        do throws(MediaError) {
            configurationVersion = try reader.readBits(8, "configurationVersion")
            if configurationVersion > 1 {
                throw MediaError(.invalidConfigurationRecord, field: "configurationVersion", byteOffset: 0,
                                "version \(configurationVersion), expected 1")
            }
            generalProfileSpace = try reader.readBits(2, "general_profile_space")
            generalTierFlag = try reader.readFlag("general_tier_flag")
            generalProfileIdc = try reader.readBits(5, "general_profile_idc")
            generalProfileCompatibilityFlags = UInt32(try reader.readBits(32, "general_profile_compatibility_flags"))
            generalConstraintIndicatorFlags = UInt64(try reader.readBits(32, "general_constraint_indicator_flags")) << 16
                | UInt64(try reader.readBits(16, "general_constraint_indicator_flags"))
            generalLevelIdc = try reader.readBits(8, "general_level_idc")
            try reader.skipBits(4, "reserved")
            minSpatialSegmentationIdc = try reader.readBits(12, "min_spatial_segmentation_idc")
            try reader.skipBits(6, "reserved")
            parallelismType = try reader.readBits(2, "parallelismType")
            try reader.skipBits(6, "reserved")
            chromaFormat = try reader.readBits(2, "chromaFormat")
            try reader.skipBits(5, "reserved")
            bitDepthLumaMinus8 = try reader.readBits(3, "bitDepthLumaMinus8")
            try reader.skipBits(5, "reserved")
            bitDepthChromaMinus8 = try reader.readBits(3, "bitDepthChromaMinus8")
            avgFrameRate = try reader.readBits(16, "avgFrameRate")
            constantFrameRate = try reader.readBits(2, "constantFrameRate")
            numTemporalLayers = try reader.readBits(3, "numTemporalLayers")
            temporalIdNested = try reader.readFlag("temporalIdNested")
            lengthSizeMinusOne = try reader.readBits(2, "lengthSizeMinusOne")
            if lengthSizeMinusOne == 2 {
                throw MediaError(.invalidConfigurationRecord, field: "lengthSizeMinusOne", byteOffset: 21, "a 3-byte NAL unit length")
            }
            var arrays: [NALUnitArray] = []
            for _ in 0..<(try reader.readBits(8, "numOfArrays")) {
                let complete = try reader.readFlag("array_completeness")
                try reader.skipBits(1, "reserved")
                let type = HEVCNALUnitType(rawValue: UInt8(try reader.readBits(6, "NAL_unit_type")))
                var units: [[UInt8]] = []
                for _ in 0..<(try reader.readBits(16, "numNalus")) {
                    let length = try reader.readBits(16, "nalUnitLength")
                    let start = reader.bitOffset / 8
                    try reader.skipBits(8 * length, "nalUnit")
                    units.append(Array(bytes[start..<start + length]))
                }
                arrays.append(NALUnitArray(arrayCompleteness: complete, nalUnitType: type, nalUnits: units))
            }
            self.arrays = arrays
        } catch {
            guard error.byteOffset == nil else { throw error }
            var located = error
            located.byteOffset = (error.bitOffset ?? 0) / 8
            located.bitOffset = nil
            throw located
        }
    }

    /// The record in `bytes` when they are an `hvcC` rather than anything else (an `avcC`, say):
    /// they parse, every array holds VPS, SPS, PPS or SEI NAL units, and an SPS among them
    /// parses; nil otherwise.
    public static func recognizing(_ bytes: [UInt8]) -> HEVCDecoderConfigurationRecord? {
        guard let record = try? HEVCDecoderConfigurationRecord(parsing: bytes) else { return nil }
        let types: Set<HEVCNALUnitType> = [.videoParameterSet, .sequenceParameterSet, .pictureParameterSet, .prefixSEI, .suffixSEI]
        guard record.arrays.allSatisfy({ types.contains($0.nalUnitType) }) else { return nil }
        let sequenceParameterSets = record.arrays.filter { $0.nalUnitType == .sequenceParameterSet }.flatMap(\.nalUnits)
        return sequenceParameterSets.contains { (try? HEVCSequenceParameterSet(nalUnit: $0)) != nil } ? record : nil
    }

    /// The record's bytes (the `hvcC` box's payload). NAL units longer than 65,535 bytes, and
    /// arrays of more than 65,535 units, cannot be written and are left out.
    public var bytes: [UInt8] {
        var out: [UInt8] = [UInt8(configurationVersion & 0xFF),
                            UInt8((generalProfileSpace & 3) << 6 | (generalTierFlag ? 0x20 : 0) | (generalProfileIdc & 0x1F))]
        BigEndian.append(Int(generalProfileCompatibilityFlags), count: 4, to: &out)
        BigEndian.append(Int(generalConstraintIndicatorFlags >> 16), count: 4, to: &out)
        BigEndian.append(Int(generalConstraintIndicatorFlags & 0xFFFF), count: 2, to: &out)
        out.append(UInt8(generalLevelIdc & 0xFF))
        BigEndian.append(0xF000 | (minSpatialSegmentationIdc & 0xFFF), count: 2, to: &out)
        out += [0xFC | UInt8(parallelismType & 3), 0xFC | UInt8(chromaFormat & 3),
                0xF8 | UInt8(bitDepthLumaMinus8 & 7), 0xF8 | UInt8(bitDepthChromaMinus8 & 7)]
        BigEndian.append(avgFrameRate, count: 2, to: &out)
        out.append(UInt8((constantFrameRate & 3) << 6 | (numTemporalLayers & 7) << 3 | (temporalIdNested ? 4 : 0) | (lengthSizeMinusOne & 3)))
        out.append(UInt8(min(arrays.count, 255)))
        for array in arrays.prefix(255) {
            let units = array.nalUnits.filter { $0.count <= 0xFFFF }.prefix(0xFFFF)
            out.append((array.arrayCompleteness ? 0x80 : 0) | array.nalUnitType.rawValue)
            BigEndian.append(units.count, count: 2, to: &out)
            for unit in units {
                BigEndian.append(unit.count, count: 2, to: &out)
                out += unit
            }
        }
        return out
    }
}
