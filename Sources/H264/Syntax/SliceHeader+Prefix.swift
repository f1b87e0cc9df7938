public import MediaCore
/// ``SliceHeader/Prefix``: the elements before any parameter set is needed, and their one reader.
extension SliceHeader {
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
        package let rbsp: [UInt8]
        package let nextBit: Int

        /// Reads `first_mb_in_slice`, `slice_type` and `pic_parameter_set_id` of a slice NAL unit.
        ///
        /// - Parameter nalUnit: the slice NAL unit, header byte first (emulation prevention still
        ///   present); only its first ``SliceHeader/maximumEncodedSize`` bytes are read.
        /// - Throws: `MediaError.Code.unexpectedNALUnitType` for NAL units that do not start with
        ///   a slice header, the NAL unit header's errors and the bit reader's errors.
        public init<Bytes: Collection<UInt8>>(nalUnit: Bytes) throws(MediaError) {
            // Read from contiguous bytes, by one non-generic reader: the slice header of every
            // received picture comes through here, and generic code the optimizer leaves
            // unspecialized reads each byte through the collection's witness table.
            let read = { (bytes: UnsafeBufferPointer<UInt8>) in Result { () throws(MediaError) in try Prefix(contiguous: bytes) } }
            self = try (nalUnit.withContiguousStorageIfAvailable(read) ?? Array(nalUnit).withUnsafeBufferPointer(read)).get()
        }

        /// ``init(nalUnit:)`` over contiguous bytes.
        package init(contiguous nalUnit: UnsafeBufferPointer<UInt8>) throws(MediaError) {
            let header = try SliceHeader.sliceNALUnitHeader(nalUnit)
            let rbsp = RBSP.decode(buffer: UnsafeBufferPointer(rebasing: nalUnit.dropFirst()), limit: SliceHeader.maximumEncodedSize)
            let (elements, nextBit) = try rbsp.withUnsafeBufferPointer { (buffer) throws(MediaError) in
                var cursor = BitCursor(buffer)
                return (try SliceHeader.readPrefixElements(&cursor), cursor.bitOffset)
            }
            self.init(header: header, elements: elements, rbsp: rbsp, nextBit: nextBit)
        }

        package init(header: NALUnitHeader, elements: PrefixElements, rbsp: [UInt8], nextBit: Int) {
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
    package struct PrefixElements {
        package var firstMbInSlice: Int
        package var sliceType: Int
        package var picParameterSetId: Int
    }

    /// The NAL unit header of a slice NAL unit.
    ///
    /// - Throws: the NAL unit header's errors, `MediaError.Code.unexpectedNALUnitType` for NAL
    ///   units that do not start with a slice header.
    package static func sliceNALUnitHeader(_ nalUnit: UnsafeBufferPointer<UInt8>) throws(MediaError) -> NALUnitHeader {
        let header = try NALUnitHeader(validating: nalUnit)
        let type = header.nalUnitType
        guard type == .slice || type == .idrSlice || type == .sliceDataPartitionA else {
            throw MediaError(.unexpectedNALUnitType, field: "nal_unit_type", byteOffset: 0,
                            "NAL unit type \(type.rawValue) has no slice header")
        }
        return header
    }

    /// Reads `first_mb_in_slice`, `slice_type` and `pic_parameter_set_id`.
    package static func readPrefixElements(_ reader: inout BitCursor) throws(MediaError) -> PrefixElements {
        let firstMbInSlice = try reader.readUE("first_mb_in_slice", max: 139_264) // MaxFS of level 6.2
        let sliceType = try reader.readUE("slice_type", max: 9)
        let picParameterSetId = try reader.readUE("pic_parameter_set_id", max: 255)
        return PrefixElements(firstMbInSlice: firstMbInSlice, sliceType: sliceType, picParameterSetId: picParameterSetId)
    }
}
