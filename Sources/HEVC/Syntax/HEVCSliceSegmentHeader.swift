public import MediaCore

/// The first elements of `slice_segment_header()` (ITU-T H.265 clause 7.3.6.1): those that
/// place a slice segment in its picture and give the picture order count's low bits — as far as
/// access-unit cutting and picture order count need. The rest (reference picture sets, weights,
/// entry points …) is not read.
public struct HEVCSliceSegmentHeader: Hashable, Sendable {
    /// The NAL unit header.
    public let nalUnitHeader: HEVCNALUnitHeader
    /// `first_slice_segment_in_pic_flag`: the segment begins a picture.
    public let firstSliceSegmentInPicFlag: Bool
    /// `no_output_of_prior_pics_flag` (IRAP pictures); false otherwise.
    public let noOutputOfPriorPicsFlag: Bool
    /// `slice_pic_parameter_set_id`, 0…63.
    public let slicePicParameterSetId: Int
    /// `dependent_slice_segment_flag`; false when absent.
    public let dependentSliceSegmentFlag: Bool
    /// `slice_segment_address`: the first coding tree block in raster scan; 0 for the first segment.
    public let sliceSegmentAddress: Int
    /// `slice_type`: 0 B, 1 P, 2 I; nil for a dependent slice segment (it takes its slice's).
    public let sliceType: Int?
    /// `pic_output_flag`; true when absent.
    public let picOutputFlag: Bool
    /// `colour_plane_id` (separate colour planes); 0 otherwise.
    public let colourPlaneId: Int
    /// `slice_pic_order_cnt_lsb`: the picture order count modulo `MaxPicOrderCntLsb`; 0 for IDR
    /// pictures and dependent slice segments, which do not carry it.
    public let slicePicOrderCntLsb: Int

    /// The most RBSP bytes the elements read here can take (the header, the flags, a
    /// `ue(v)` of up to 13 bits, a 21-bit address, 7 reserved flags, a 5-bit `ue(v)` and a 16-bit POC: 84 bits).
    static let maximumEncodedSize = 16

    /// Reads the slice segment header's first elements.
    ///
    /// - Parameters:
    ///   - nalUnit: the whole NAL unit of a VCL type with a slice segment header (0…9, 16…21),
    ///     both header bytes first; only its first bytes are read.
    ///   - parameterSets: the parameter sets, for the PPS and SPS the segment names.
    /// - Throws: `MediaError`: `unexpectedNALUnitType` for another type, `missingParameterSet`
    ///   for a PPS or SPS that is not known, `valueOutOfRange` (an id or address outside its
    ///   range), `truncated`, `expGolombOverflow`, `forbiddenZeroBit`, `emptyNALUnit`.
    public init(nalUnit: some Collection<UInt8>, parameterSets: HEVCParameterSetCache) throws(MediaError) {
        self = try BitReader.readHEVC(nalUnit: nalUnit, limit: Self.maximumEncodedSize) { (reader) throws(MediaError) in
            try Self(reader: &reader, parameterSets: parameterSets)
        }.value
    }

    /// The elements read, in bitstream order, with FFmpeg's `trace_headers` names.
    ///
    /// - Throws: the errors of ``init(nalUnit:parameterSets:)``.
    public static func syntaxElements(nalUnit: some Collection<UInt8>, parameterSets: HEVCParameterSetCache) throws(MediaError) -> [SyntaxElement] {
        try BitReader.readHEVC(nalUnit: nalUnit, recordsElements: true, limit: maximumEncodedSize) { (reader) throws(MediaError) in
            try Self(reader: &reader, parameterSets: parameterSets)
        }.elements
    }

    private init(reader: inout BitReader, parameterSets: HEVCParameterSetCache) throws(MediaError) {
        let type = HEVCNALUnitType(rawValue: UInt8(reader.bytes.first.map { ($0 >> 1) & 0x3F } ?? 0))
        guard type.rawValue <= 9 || (16...21).contains(type.rawValue) else {
            throw MediaError(.unexpectedNALUnitType, field: "nal_unit_type", byteOffset: 0, bitOffset: 1,
                            "NAL unit type \(type) has no slice segment header")
        }
        nalUnitHeader = try reader.readHEVCNALUnitHeader(expecting: type)
        firstSliceSegmentInPicFlag = try reader.readFlag("first_slice_segment_in_pic_flag")
        noOutputOfPriorPicsFlag = type.isIRAP ? try reader.readFlag("no_output_of_prior_pics_flag") : false
        let ppsAt = reader.bitOffset
        slicePicParameterSetId = try reader.readUE("slice_pic_parameter_set_id", max: 63)
        guard let pps = parameterSets.pictureParameterSets[slicePicParameterSetId],
              let sps = parameterSets.sequenceParameterSets[pps.ppsSeqParameterSetId] else {
            throw MediaError(.missingParameterSet, field: "slice_pic_parameter_set_id", bitOffset: ppsAt,
                            "PPS \(slicePicParameterSetId) or its SPS is not known")
        }
        var dependent = false, address = 0
        if !firstSliceSegmentInPicFlag {
            if pps.dependentSliceSegmentsEnabledFlag { dependent = try reader.readFlag("dependent_slice_segment_flag") }
            let count = sps.picSizeInCtbsY
            // Ceil(Log2(PicSizeInCtbsY)) bits.
            let bits = count <= 1 ? 0 : Int.bitWidth - (count - 1).leadingZeroBitCount
            let at = reader.bitOffset
            address = try reader.readBits(bits, "slice_segment_address")
            if address >= count {
                throw MediaError(.valueOutOfRange, field: "slice_segment_address", bitOffset: at, "\(address) is outside 0...\(count - 1)")
            }
        }
        dependentSliceSegmentFlag = dependent
        sliceSegmentAddress = address
        var fields = (type: Int?.none, output: true, plane: 0, poc: 0)
        if !dependent {
            for i in 0..<pps.numExtraSliceHeaderBits { _ = try reader.readFlag("slice_reserved_flag[\(i)]") }
            fields.type = try reader.readUE("slice_type", max: 2)
            if pps.outputFlagPresentFlag { fields.output = try reader.readFlag("pic_output_flag") }
            if sps.separateColourPlaneFlag { fields.plane = try reader.readBits(2, "colour_plane_id", tolerating: { $0 < 3 }, "0...2") }
            if !type.isIDR { fields.poc = try reader.readBits(sps.log2MaxPicOrderCntLsbMinus4 + 4, "slice_pic_order_cnt_lsb") }
        }
        (sliceType, picOutputFlag, colourPlaneId, slicePicOrderCntLsb) = fields
    }
}
