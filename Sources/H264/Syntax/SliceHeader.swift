public import MediaCore
/// The leading part of a slice header (clause 7.3.3): the elements that identify the picture a
/// slice belongs to, as far as access-unit detection (clause 7.4.1.2.4) needs them.
///
/// Elements after `redundant_pic_cnt` (reference list modification, weights, decoded reference
/// picture marking, QP, deblocking) are not read.
public struct SliceHeader: Hashable, Sendable {
    /// `nal_unit_type` of the slice's NAL unit (1, 2 or 5).
    public var nalUnitType: NALUnitType
    /// `nal_ref_idc` of the slice's NAL unit.
    public var nalRefIdc: UInt8
    /// `first_mb_in_slice`.
    public var firstMbInSlice: Int
    /// `slice_type`, 0…9 (values 5…9 say every slice of the picture has the same type).
    public var sliceType: Int
    /// `pic_parameter_set_id`, 0…255.
    public var picParameterSetId: Int
    /// `colour_plane_id`, present when the SPS has `separate_colour_plane_flag`.
    public var colourPlaneId: Int
    /// `frame_num`.
    public var frameNum: Int
    /// `field_pic_flag`.
    public var fieldPicFlag: Bool
    /// `bottom_field_flag`.
    public var bottomFieldFlag: Bool
    /// `idr_pic_id`, present in IDR slices (0…65535; a larger value is kept with a warning).
    public var idrPicId: Int
    /// `pic_order_cnt_lsb` (POC type 0).
    public var picOrderCntLsb: Int
    /// `delta_pic_order_cnt_bottom` (POC type 0, frame pictures, when the PPS says so).
    public var deltaPicOrderCntBottom: Int
    /// `delta_pic_order_cnt[0]` and `[1]` (POC type 1).
    public var deltaPicOrderCnt: [Int]
    /// `redundant_pic_cnt`: 0 for primary coded pictures.
    public var redundantPicCnt: Int
    /// Tolerable problems met while parsing (an `idr_pic_id` above 65535 is kept: it is only
    /// compared), each with the code, field and bit offset an error would have.
    public var diagnostics: [MediaError]

    /// The kind of slice, from `slice_type` modulo 5 (Table 7-6).
    public enum Kind: Int, Hashable, Sendable {
        /// P slice.
        case p = 0
        /// B slice.
        case b = 1
        /// I slice.
        case i = 2
        /// SP slice.
        case sp = 3
        /// SI slice.
        case si = 4
    }

    /// The slice's kind (`slice_type % 5`).
    public var kind: Kind { Kind(rawValue: sliceType % 5) ?? .p }

    /// `IdrPicFlag`: true for slices of IDR pictures.
    public var isIDR: Bool { nalUnitType == .idrSlice }

    /// How many leading bytes of a slice NAL unit are enough to hold every element this type reads
    /// (13 elements, each at most 65 bits as Exp-Golomb codes are capped at 32 leading zeros).
    public static let maximumEncodedSize = 128

    /// Parses the leading elements of a slice header.
    ///
    /// - Parameters:
    ///   - nalUnit: the slice NAL unit, header byte first (emulation prevention still present);
    ///     only its first ``maximumEncodedSize`` bytes are read.
    ///   - pictureParameterSets: the PPS by id; the slice's PPS names its SPS.
    ///   - sequenceParameterSets: the SPS by id.
    /// - Throws: `MediaError.Code.unexpectedNALUnitType` for NAL units that do not start with a
    ///   slice header, `MediaError.Code.missingParameterSet` when the PPS or its SPS is unknown,
    ///   and the bit reader's errors.
    public init<Bytes: Collection<UInt8>>(nalUnit: Bytes,
                                          pictureParameterSets: [Int: PictureParameterSet],
                                          sequenceParameterSets: [Int: SequenceParameterSet]) throws(MediaError) {
        try self.init(prefix: Prefix(nalUnit: nalUnit), pictureParameterSets: pictureParameterSets,
                      sequenceParameterSets: sequenceParameterSets)
    }

    /// Parses the rest of the leading elements of a slice header whose ``Prefix`` has been read.
    ///
    /// - Throws: `MediaError.Code.missingParameterSet` when the PPS or its SPS is unknown, and
    ///   the bit reader's errors.
    public init(prefix: Prefix, pictureParameterSets: [Int: PictureParameterSet],
                sequenceParameterSets: [Int: SequenceParameterSet]) throws(MediaError) {
        try self.init(prefix: prefix, fields: ParameterSetFields(pictureParameterSetId: prefix.picParameterSetId,
                                                                  pictureParameterSets: pictureParameterSets,
                                                                  sequenceParameterSets: sequenceParameterSets))
    }

    /// Parses the rest of the leading elements of a slice header whose ``Prefix`` has been read,
    /// with the fields of its PPS and SPS.
    package init(prefix: Prefix, fields: ParameterSetFields) throws(MediaError) {
        self = try prefix.rbsp.withUnsafeBufferPointer { (buffer) throws(MediaError) in
            var reader = BitCursor(buffer, bitOffset: prefix.nextBit)
            return try SliceHeader(nalUnitType: prefix.nalUnitType, nalRefIdc: prefix.nalRefIdc,
                                   elements: PrefixElements(firstMbInSlice: prefix.firstMbInSlice, sliceType: prefix.sliceType,
                                                            picParameterSetId: prefix.picParameterSetId),
                                   reading: &reader, fields: fields)
        }
    }

    /// Reads the elements after the ``Prefix`` (`colour_plane_id` … `redundant_pic_cnt`) with
    /// `reader`, which stands just after `pic_parameter_set_id`: the one reader of them.
    package init(nalUnitType type: NALUnitType, nalRefIdc: UInt8, elements: PrefixElements, reading reader: inout BitCursor,
         fields: ParameterSetFields) throws(MediaError) {
        nalUnitType = type
        self.nalRefIdc = nalRefIdc
        firstMbInSlice = elements.firstMbInSlice
        sliceType = elements.sliceType
        picParameterSetId = elements.picParameterSetId
        colourPlaneId = fields.separateColourPlaneFlag ? try reader.readBits(2, "colour_plane_id") : 0
        frameNum = try reader.readBits(fields.log2MaxFrameNumMinus4 + 4, "frame_num")
        fieldPicFlag = false
        bottomFieldFlag = false
        if !fields.frameMbsOnlyFlag {
            fieldPicFlag = try reader.readFlag("field_pic_flag")
            if fieldPicFlag { bottomFieldFlag = try reader.readFlag("bottom_field_flag") }
        }
        idrPicId = type == .idrSlice ? try reader.readUE("idr_pic_id", tolerating: 0...65_535) : 0
        picOrderCntLsb = 0
        deltaPicOrderCntBottom = 0
        deltaPicOrderCnt = []
        if fields.picOrderCntType == 0 {
            picOrderCntLsb = try reader.readBits(fields.log2MaxPicOrderCntLsbMinus4 + 4, "pic_order_cnt_lsb")
            if fields.bottomFieldPicOrderInFramePresentFlag && !fieldPicFlag {
                deltaPicOrderCntBottom = try reader.readSE("delta_pic_order_cnt_bottom")
            }
        }
        if fields.picOrderCntType == 1 && !fields.deltaPicOrderAlwaysZeroFlag {
            deltaPicOrderCnt.append(try reader.readSE("delta_pic_order_cnt[0]"))
            if fields.bottomFieldPicOrderInFramePresentFlag && !fieldPicFlag {
                deltaPicOrderCnt.append(try reader.readSE("delta_pic_order_cnt[1]"))
            }
        }
        redundantPicCnt = fields.redundantPicCntPresentFlag ? try reader.readUE("redundant_pic_cnt", max: 127) : 0
        diagnostics = reader.diagnostics
    }
}

extension SliceHeader {
    /// Parses the leading elements of a slice header, taking the PPS and SPS from a cache.
    public init<Bytes: Collection<UInt8>>(nalUnit: Bytes, parameterSets: ParameterSetCache) throws(MediaError) {
        try self.init(nalUnit: nalUnit, pictureParameterSets: parameterSets.pictureParameterSets,
                      sequenceParameterSets: parameterSets.sequenceParameterSets)
    }

    /// Parses the rest of the leading elements of a slice header whose ``Prefix`` has been read,
    /// taking the PPS and SPS from a cache.
    public init(prefix: Prefix, parameterSets: ParameterSetCache) throws(MediaError) {
        try self.init(prefix: prefix, fields: parameterSets.sliceHeaderFields(pictureParameterSetId: prefix.picParameterSetId))
    }
}
