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
    public var diagnostics: [H264Error]

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

    /// The first three elements of a slice header (clause 7.3.3), which need no parameter set:
    /// the one reader of a slice header's beginning, used wherever only these are wanted.
    public struct Prefix: Hashable, Sendable {
        /// `nal_unit_type` of the slice's NAL unit (1, 2 or 5).
        public var nalUnitType: NALUnitType
        /// `nal_ref_idc` of the slice's NAL unit.
        public var nalRefIdc: UInt8
        /// `first_mb_in_slice`.
        public var firstMbInSlice: Int
        /// `slice_type`, 0…9.
        public var sliceType: Int
        /// `pic_parameter_set_id`, 0…255.
        public var picParameterSetId: Int
        /// The RBSP read so far and where the next element begins, to read on from.
        let rbsp: [UInt8]
        let nextBit: Int

        /// Reads `first_mb_in_slice`, `slice_type` and `pic_parameter_set_id` of a slice NAL unit.
        ///
        /// - Parameter nalUnit: the slice NAL unit, header byte first (emulation prevention still
        ///   present); only its first ``SliceHeader/maximumEncodedSize`` bytes are read.
        /// - Throws: ``H264Error/Code/unexpectedNALUnitType`` for NAL units that do not start with
        ///   a slice header, the NAL unit header's errors and the bit reader's errors.
        public init<Bytes: Collection<UInt8>>(nalUnit: Bytes) throws(H264Error) {
            // Read from contiguous bytes, by one non-generic reader: the slice header of every
            // received picture comes through here, and generic code the optimizer leaves
            // unspecialized reads each byte through the collection's witness table.
            let read = { (bytes: UnsafeBufferPointer<UInt8>) in Result { () throws(H264Error) in try Prefix(contiguous: bytes) } }
            self = try (nalUnit.withContiguousStorageIfAvailable(read) ?? Array(nalUnit).withUnsafeBufferPointer(read)).get()
        }

        /// ``init(nalUnit:)`` over contiguous bytes.
        init(contiguous nalUnit: UnsafeBufferPointer<UInt8>) throws(H264Error) {
            let header = try SliceHeader.sliceNALUnitHeader(nalUnit)
            let rbsp = RBSP.decode(buffer: UnsafeBufferPointer(rebasing: nalUnit.dropFirst()), limit: SliceHeader.maximumEncodedSize)
            let (elements, nextBit) = try rbsp.withUnsafeBufferPointer { (buffer) throws(H264Error) in
                var cursor = BitCursor(buffer)
                return (try SliceHeader.readPrefixElements(&cursor), cursor.bitOffset)
            }
            self.init(header: header, elements: elements, rbsp: rbsp, nextBit: nextBit)
        }

        init(header: NALUnitHeader, elements: PrefixElements, rbsp: [UInt8], nextBit: Int) {
            nalUnitType = header.nalUnitType
            nalRefIdc = header.nalRefIdc
            firstMbInSlice = elements.firstMbInSlice
            sliceType = elements.sliceType
            picParameterSetId = elements.picParameterSetId
            self.rbsp = rbsp
            self.nextBit = nextBit
        }
    }

    /// The three elements of a ``Prefix``.
    struct PrefixElements {
        var firstMbInSlice: Int
        var sliceType: Int
        var picParameterSetId: Int
    }

    /// The NAL unit header of a slice NAL unit.
    ///
    /// - Throws: the NAL unit header's errors, ``H264Error/Code/unexpectedNALUnitType`` for NAL
    ///   units that do not start with a slice header.
    static func sliceNALUnitHeader(_ nalUnit: UnsafeBufferPointer<UInt8>) throws(H264Error) -> NALUnitHeader {
        let header = try NALUnitHeader(validating: nalUnit)
        let type = header.nalUnitType
        guard type == .slice || type == .idrSlice || type == .sliceDataPartitionA else {
            throw H264Error(.unexpectedNALUnitType, field: "nal_unit_type", byteOffset: 0,
                            "NAL unit type \(type.rawValue) has no slice header")
        }
        return header
    }

    /// Reads `first_mb_in_slice`, `slice_type` and `pic_parameter_set_id`.
    static func readPrefixElements(_ reader: inout BitCursor) throws(H264Error) -> PrefixElements {
        let firstMbInSlice = try reader.readUE("first_mb_in_slice", max: 139_264) // MaxFS of level 6.2
        let sliceType = try reader.readUE("slice_type", max: 9)
        let picParameterSetId = try reader.readUE("pic_parameter_set_id", max: 255)
        return PrefixElements(firstMbInSlice: firstMbInSlice, sliceType: sliceType, picParameterSetId: picParameterSetId)
    }

    /// Parses the leading elements of a slice header.
    ///
    /// - Parameters:
    ///   - nalUnit: the slice NAL unit, header byte first (emulation prevention still present);
    ///     only its first ``maximumEncodedSize`` bytes are read.
    ///   - pictureParameterSets: the PPS by id; the slice's PPS names its SPS.
    ///   - sequenceParameterSets: the SPS by id.
    /// - Throws: ``H264Error/Code/unexpectedNALUnitType`` for NAL units that do not start with a
    ///   slice header, ``H264Error/Code/missingParameterSet`` when the PPS or its SPS is unknown,
    ///   and the bit reader's errors.
    public init<Bytes: Collection<UInt8>>(nalUnit: Bytes,
                                          pictureParameterSets: [Int: PictureParameterSet],
                                          sequenceParameterSets: [Int: SequenceParameterSet]) throws(H264Error) {
        try self.init(prefix: Prefix(nalUnit: nalUnit), pictureParameterSets: pictureParameterSets,
                      sequenceParameterSets: sequenceParameterSets)
    }

    /// Parses the rest of the leading elements of a slice header whose ``Prefix`` has been read.
    ///
    /// - Throws: ``H264Error/Code/missingParameterSet`` when the PPS or its SPS is unknown, and
    ///   the bit reader's errors.
    public init(prefix: Prefix, pictureParameterSets: [Int: PictureParameterSet],
                sequenceParameterSets: [Int: SequenceParameterSet]) throws(H264Error) {
        try self.init(prefix: prefix, fields: ParameterSetFields(pictureParameterSetId: prefix.picParameterSetId,
                                                                  pictureParameterSets: pictureParameterSets,
                                                                  sequenceParameterSets: sequenceParameterSets))
    }

    /// What of a PPS and the SPS it names the leading elements of a slice header depend on: a
    /// plain value, kept per PPS by ``ParameterSetCache`` so that reading the slice header of
    /// each received picture copies no parameter set.
    struct ParameterSetFields: Hashable, Sendable {
        var separateColourPlaneFlag: Bool
        var log2MaxFrameNumMinus4: Int
        var frameMbsOnlyFlag: Bool
        var picOrderCntType: Int
        var log2MaxPicOrderCntLsbMinus4: Int
        var deltaPicOrderAlwaysZeroFlag: Bool
        var bottomFieldPicOrderInFramePresentFlag: Bool
        var redundantPicCntPresentFlag: Bool

        init(pps: PictureParameterSet, sps: SequenceParameterSet) {
            separateColourPlaneFlag = sps.separateColourPlaneFlag
            log2MaxFrameNumMinus4 = sps.log2MaxFrameNumMinus4
            frameMbsOnlyFlag = sps.frameMbsOnlyFlag
            picOrderCntType = sps.picOrderCntType
            log2MaxPicOrderCntLsbMinus4 = sps.log2MaxPicOrderCntLsbMinus4
            deltaPicOrderAlwaysZeroFlag = sps.deltaPicOrderAlwaysZeroFlag
            bottomFieldPicOrderInFramePresentFlag = pps.bottomFieldPicOrderInFramePresentFlag
            redundantPicCntPresentFlag = pps.redundantPicCntPresentFlag
        }

        /// The fields of PPS `pictureParameterSetId` and its SPS.
        ///
        /// - Throws: ``H264Error/Code/missingParameterSet`` when the PPS or its SPS is unknown.
        init(pictureParameterSetId: Int, pictureParameterSets: [Int: PictureParameterSet],
             sequenceParameterSets: [Int: SequenceParameterSet]) throws(H264Error) {
            guard let pps = pictureParameterSets[pictureParameterSetId] else {
                throw H264Error(.missingParameterSet, field: "pic_parameter_set_id",
                                "slice refers to PPS \(pictureParameterSetId), which has not been seen")
            }
            guard let sps = sequenceParameterSets[pps.seqParameterSetId] else {
                throw H264Error(.missingParameterSet, field: "seq_parameter_set_id",
                                "PPS \(pictureParameterSetId) refers to SPS \(pps.seqParameterSetId), which has not been seen")
            }
            self.init(pps: pps, sps: sps)
        }
    }

    /// Parses the rest of the leading elements of a slice header whose ``Prefix`` has been read,
    /// with the fields of its PPS and SPS.
    init(prefix: Prefix, fields: ParameterSetFields) throws(H264Error) {
        self = try prefix.rbsp.withUnsafeBufferPointer { (buffer) throws(H264Error) in
            var reader = BitCursor(buffer, bitOffset: prefix.nextBit)
            return try SliceHeader(nalUnitType: prefix.nalUnitType, nalRefIdc: prefix.nalRefIdc,
                                   elements: PrefixElements(firstMbInSlice: prefix.firstMbInSlice, sliceType: prefix.sliceType,
                                                            picParameterSetId: prefix.picParameterSetId),
                                   reading: &reader, fields: fields)
        }
    }

    /// Reads the elements after the ``Prefix`` (`colour_plane_id` … `redundant_pic_cnt`) with
    /// `reader`, which stands just after `pic_parameter_set_id`: the one reader of them.
    init(nalUnitType type: NALUnitType, nalRefIdc: UInt8, elements: PrefixElements, reading reader: inout BitCursor,
         fields: ParameterSetFields) throws(H264Error) {
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

    /// What ``read(header:payload:parameterSets:firstWindow:)`` found in a slice NAL unit.
    enum Reading {
        /// Not even the ``Prefix`` could be read: the unit is damaged.
        case damaged(H264Error)
        /// The ``Prefix`` was read (its `first_mb_in_slice` is given), the rest not: its
        /// parameter sets are unknown, or the header is cut short or out of range.
        case prefix(firstMbInSlice: Int, problem: H264Error)
        /// The whole header: what tells its picture apart, and its tolerable problems.
        case header(PictureIdentity, diagnostics: [H264Error])
    }

    /// Reads the slice header of the NAL unit whose header byte is `header` and whose following
    /// bytes (emulation prevention still present) begin `payload`, with no allocation: the
    /// emulation prevention is removed on the stack, and only as far as the header reaches (the
    /// slice header of every received picture comes through here). The same values and errors
    /// as ``Prefix/init(nalUnit:)`` followed by ``init(prefix:parameterSets:)``.
    ///
    /// `firstWindow` is how many RBSP bytes are decoded first (more only when the header runs
    /// past them); a parameter so that tests can make every header run past it.
    static func read(header: UInt8, payload: UnsafeBufferPointer<UInt8>, parameterSets: ParameterSetCache,
                     firstWindow: Int = 16) -> Reading {
        let nalHeader: NALUnitHeader
        do throws(H264Error) {
            nalHeader = try withUnsafeBytes(of: header) { (byte) throws(H264Error) in
                try sliceNALUnitHeader(byte.assumingMemoryBound(to: UInt8.self))
            }
        } catch {
            return .damaged(error)
        }
        // Real slice headers fit in a few bytes: 16 RBSP bytes first, all of them when the header
        // runs past those.
        if firstWindow < maximumEncodedSize {
            let first = read(nalHeader, payload, window: Swift.max(1, firstWindow), parameterSets: parameterSets)
            if !first.cutByWindow { return first.reading }
        }
        return read(nalHeader, payload, window: maximumEncodedSize, parameterSets: parameterSets).reading
    }

    /// ``read(header:payload:parameterSets:firstWindow:)`` from at most `window` RBSP bytes;
    /// `cutByWindow` is true when the header ran past the window rather than past the NAL unit
    /// (read it again with more).
    private static func read(_ header: NALUnitHeader, _ payload: UnsafeBufferPointer<UInt8>, window: Int,
                             parameterSets: ParameterSetCache) -> (reading: Reading, cutByWindow: Bool) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: window) { scratch -> (reading: Reading, cutByWindow: Bool) in
            let count = RBSP.decode(payload, into: scratch)
            let windowFull = count == window && window < maximumEncodedSize
            var reader = BitCursor(UnsafeBufferPointer(rebasing: scratch[..<count]))
            let elements: PrefixElements
            do throws(H264Error) {
                elements = try readPrefixElements(&reader)
            } catch {
                return (.damaged(error), windowFull && error.code == .truncated)
            }
            do throws(H264Error) {
                let fields = try parameterSets.sliceHeaderFields(pictureParameterSetId: elements.picParameterSetId)
                let slice = try SliceHeader(nalUnitType: header.nalUnitType, nalRefIdc: header.nalRefIdc, elements: elements,
                                            reading: &reader, fields: fields)
                return (.header(PictureIdentity(slice), diagnostics: slice.diagnostics), false)
            } catch {
                return (.prefix(firstMbInSlice: elements.firstMbInSlice, problem: error), windowFull && error.code == .truncated)
            }
        }
    }

    /// True when a slice with this header, following `previous` (a VCL NAL unit of the current
    /// primary coded picture), must be the first VCL NAL unit of a new primary coded picture
    /// (clause 7.4.1.2.4).
    public func startsNewPicture(after previous: SliceHeader) -> Bool {
        PictureIdentity(self).startsNewPicture(after: PictureIdentity(previous))
    }

    /// What tells the pictures of two slices apart (clause 7.4.1.2.4), and where the slice
    /// begins, as plain values: the boundary rule keeps the last slice's and compares with it
    /// without retaining anything.
    struct PictureIdentity: Equatable, Sendable {
        var firstMbInSlice: Int
        var picParameterSetId: Int
        var frameNum: Int
        var idrPicId: Int
        var picOrderCntLsb: Int
        var deltaPicOrderCntBottom: Int
        /// `delta_pic_order_cnt[0]` and `[1]`, of which the first `deltaPicOrderCntCount` are present.
        var deltaPicOrderCnt0: Int
        var deltaPicOrderCnt1: Int
        var deltaPicOrderCntCount: Int
        var redundantPicCnt: Int
        var nalRefIdc: UInt8
        var isIDR: Bool
        var fieldPicFlag: Bool
        var bottomFieldFlag: Bool

        init(_ slice: SliceHeader) {
            firstMbInSlice = slice.firstMbInSlice
            picParameterSetId = slice.picParameterSetId
            frameNum = slice.frameNum
            idrPicId = slice.idrPicId
            picOrderCntLsb = slice.picOrderCntLsb
            deltaPicOrderCntBottom = slice.deltaPicOrderCntBottom
            deltaPicOrderCntCount = slice.deltaPicOrderCnt.count
            deltaPicOrderCnt0 = slice.deltaPicOrderCnt.first ?? 0
            deltaPicOrderCnt1 = slice.deltaPicOrderCnt.dropFirst().first ?? 0
            redundantPicCnt = slice.redundantPicCnt
            nalRefIdc = slice.nalRefIdc
            isIDR = slice.isIDR
            fieldPicFlag = slice.fieldPicFlag
            bottomFieldFlag = slice.bottomFieldFlag
        }

        /// See ``SliceHeader/startsNewPicture(after:)``: the one rule.
        func startsNewPicture(after previous: PictureIdentity) -> Bool {
            if redundantPicCnt > 0 { return false }
            if frameNum != previous.frameNum { return true }
            if picParameterSetId != previous.picParameterSetId { return true }
            if fieldPicFlag != previous.fieldPicFlag { return true }
            if fieldPicFlag && bottomFieldFlag != previous.bottomFieldFlag { return true }
            if (nalRefIdc == 0) != (previous.nalRefIdc == 0) { return true }
            if picOrderCntLsb != previous.picOrderCntLsb || deltaPicOrderCntBottom != previous.deltaPicOrderCntBottom { return true }
            if deltaPicOrderCntCount != previous.deltaPicOrderCntCount || deltaPicOrderCnt0 != previous.deltaPicOrderCnt0
                || deltaPicOrderCnt1 != previous.deltaPicOrderCnt1 { return true }
            if isIDR != previous.isIDR { return true }
            if isIDR && previous.isIDR && idrPicId != previous.idrPicId { return true }
            return false
        }
    }
}

extension SliceHeader {
    /// Parses the leading elements of a slice header, taking the PPS and SPS from a cache.
    public init<Bytes: Collection<UInt8>>(nalUnit: Bytes, parameterSets: ParameterSetCache) throws(H264Error) {
        try self.init(nalUnit: nalUnit, pictureParameterSets: parameterSets.pictureParameterSets,
                      sequenceParameterSets: parameterSets.sequenceParameterSets)
    }

    /// Parses the rest of the leading elements of a slice header whose ``Prefix`` has been read,
    /// taking the PPS and SPS from a cache.
    public init(prefix: Prefix, parameterSets: ParameterSetCache) throws(H264Error) {
        try self.init(prefix: prefix, fields: parameterSets.sliceHeaderFields(pictureParameterSetId: prefix.picParameterSetId))
    }
}
