// Annex-B (ITU-T H.264 Annex B start codes) → AVCC (ISO/IEC 14496-15 length prefixes).

extension AVCC {
    /// Where the Annex-B → AVCC conversion puts parameter sets.
    public enum ParameterSetPlacement: Hashable, Sendable {
        /// Keep every NAL unit in the data, parameter sets included.
        case inBand
        /// Move SPS, PPS and SPS extension NAL units out of the data, for an `avcC` record.
        case configuration
    }

    /// The result of ``fromAnnexB(_:lengthSize:parameterSets:)``.
    public struct ConversionResult: Hashable, Sendable {
        /// The length-prefixed NAL units.
        public var data: [UInt8]
        /// The size of each length prefix in `data`.
        public var lengthSize: Int
        /// The first SPS NAL unit of each `seq_parameter_set_id`, in order of appearance.
        public var sequenceParameterSets: [[UInt8]]
        /// The first PPS NAL unit of each `pic_parameter_set_id`, in order of appearance.
        public var pictureParameterSets: [[UInt8]]
        /// The first SPS extension NAL unit (type 13) of each id, in order of appearance.
        public var sequenceParameterSetExtensions: [[UInt8]]
        /// Damaged units the conversion read past, in stream order: parameter sets whose id
        /// cannot be read (kept in `data` where they were, never moved into the configuration),
        /// each with the byte offset of its NAL unit.
        public var diagnostics: [MediaError]

        /// Creates a result.
        public init(data: [UInt8], lengthSize: Int, sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]],
                    sequenceParameterSetExtensions: [[UInt8]], diagnostics: [MediaError] = []) {
            self.diagnostics = diagnostics
            self.data = data
            self.lengthSize = lengthSize
            self.sequenceParameterSets = sequenceParameterSets
            self.pictureParameterSets = pictureParameterSets
            self.sequenceParameterSetExtensions = sequenceParameterSetExtensions
        }
    }

    /// Converts Annex-B data to AVCC.
    ///
    /// The output is built in one allocation. Below 1 MiB of input its size is computed first
    /// (a scan, then a copy from cache); from 1 MiB on, each NAL unit is copied as soon as it
    /// is found, while its bytes are still in cache, into an allocation sized for the worst
    /// case (input size plus a quarter with 4-byte lengths, since every NAL unit takes at
    /// least 4 input bytes; input size with 1- or 2-byte lengths), whose unused tail is never
    /// touched.
    ///
    /// - Parameters:
    ///   - bytes: Annex-B data (one access unit or a whole stream). Zero bytes before the first
    ///     start code are allowed; NAL units are split as ``AnnexB`` describes.
    ///   - lengthSize: The length prefix size to write: 1, 2 or 4.
    ///   - parameterSets: ``ParameterSetPlacement/inBand`` keeps every NAL unit;
    ///     ``ParameterSetPlacement/configuration`` moves parameter sets into the result's lists
    ///     (for an avcC): the first of each id moves there, later identical copies are dropped, and
    ///     a later one with the same id but different content stays in `data` where it was, so
    ///     pictures after it still decode with it. Either way the first parameter set of each id
    ///     is reported in the result.
    /// - Throws: ``MediaError/Code/invalidLengthSize``; ``MediaError/Code/missingStartCode`` when
    ///   a non-zero byte precedes the first start code; ``MediaError/Code/valueOutOfRange`` (with
    ///   the NAL unit's offset) when a NAL unit is too long for the length size.
    public static func fromAnnexB(_ bytes: [UInt8], lengthSize: Int = 4,
                                  parameterSets: ParameterSetPlacement = .inBand) throws(MediaError) -> ConversionResult {
        try validate(lengthSize: lengthSize)
        var converter = AnnexBToAVCC(lengthSize: lengthSize, placement: parameterSets)
        let outcome = bytes.withUnsafeBytes { buffer in
            Result { () throws(MediaError) -> [UInt8] in try converter.convert(buffer) }
        }
        let data = try outcome.get()
        return ConversionResult(data: data, lengthSize: lengthSize, sequenceParameterSets: converter.sps,
                                pictureParameterSets: converter.pps, sequenceParameterSetExtensions: converter.exts,
                                diagnostics: converter.diagnostics)
    }

    /// The id of an SPS (`seq_parameter_set_id`), PPS (`pic_parameter_set_id`) or SPS extension
    /// NAL unit.
    ///
    /// - Throws: ``MediaError/Code/truncated`` when the NAL unit ends before the id, and the bit
    ///   reader's errors.
    package static func parameterSetId(_ nalUnit: ArraySlice<UInt8>, type: Int) throws(MediaError) -> Int {
        // SPS: profile_idc, constraint flags and level_idc (3 bytes) precede the id.
        let skip = type == 7 ? 4 : 1
        let field = type == 8 ? "pic_parameter_set_id" : "seq_parameter_set_id"
        guard nalUnit.count > skip else {
            throw MediaError(.truncated, field: field, byteOffset: 0, "a \(nalUnit.count)-byte parameter set ends before its id")
        }
        var reader = BitReader(RBSP.decode(nalUnit.dropFirst(skip), limit: 8))
        return try reader.readUE(field, max: type == 8 ? 255 : 31)
    }
}

/// The Annex-B → AVCC conversion: which NAL units go out, the parameter sets seen, and the copy.
private struct AnnexBToAVCC {
    package let lengthSize: Int
    package let placement: AVCC.ParameterSetPlacement
    package let maximum: Int
    package var sps: [[UInt8]] = []
    package var pps: [[UInt8]] = []
    package var exts: [[UInt8]] = []
    /// The first parameter set of each kind and id goes into the configuration; a repeat with
    /// the same bytes is redundant; one with the same id but other bytes is an in-stream update.
    /// Key: type << 16 | id → index in its list.
    package var firstById: [Int: Int] = [:]
    /// Damaged units met (kept in the output, reported).
    package var diagnostics: [MediaError] = []

    /// Inputs from this size on are converted in one pass (see ``AVCC/fromAnnexB(_:lengthSize:parameterSets:)``).
    package static let onePassThreshold = 1 << 20

    package init(lengthSize: Int, placement: AVCC.ParameterSetPlacement) {
        self.lengthSize = lengthSize
        self.placement = placement
        self.maximum = AVCC.maximumLength(lengthSize: lengthSize)
    }

    package mutating func convert(_ buffer: UnsafeRawBufferPointer) throws(MediaError) -> [UInt8] {
        if buffer.count < Self.onePassThreshold {
            let units = AnnexB.nalUnits(in: buffer)
            try AnnexB.checkLeadingBytes(buffer, before: units.first?.startCodeOffset ?? buffer.count)
            var keep = [Bool](repeating: true, count: units.count)
            var total = 0
            for (index, unit) in units.enumerated() {
                keep[index] = try admit(unit.range, in: buffer)
                if keep[index] { total &+= lengthSize &+ unit.range.count }
            }
            return [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
                var written = 0
                for (index, unit) in units.enumerated() where keep[index] {
                    written = write(unit.range, of: buffer, to: output, at: written)
                }
                initialized = written
            }
        }
        // Every unit takes ≥ 4 input bytes (start code + header) and gains at most 1 byte.
        let capacity = lengthSize == 4 ? buffer.count &+ buffer.count / 4 &+ 1 : buffer.count
        var failure: MediaError?
        let data = [UInt8](unsafeUninitializedCapacity: capacity) { output, initialized in
            var written = 0
            var first = true
            do throws(MediaError) {
                try AnnexB.forEachNALUnit(in: buffer) { (unit: NALUnitLocation) throws(MediaError) in
                    if first {
                        first = false
                        try AnnexB.checkLeadingBytes(buffer, before: unit.startCodeOffset)
                    }
                    guard try admit(unit.range, in: buffer) else { return }
                    guard lengthSize &+ unit.range.count <= output.count &- written else {
                        throw MediaError(.overflow, field: "NALUnitLength", byteOffset: unit.range.lowerBound,
                                        "output larger than its bound")
                    }
                    written = write(unit.range, of: buffer, to: output, at: written)
                }
                if first { try AnnexB.checkLeadingBytes(buffer, before: buffer.count) }
            } catch {
                failure = error
            }
            initialized = written
        }
        if let failure { throw failure }
        return data
    }

    /// Checks a unit's length, records it when it is the first parameter set of its id, and
    /// says whether it goes into the output. Call once per unit, in order.
    package mutating func admit(_ range: Range<Int>, in buffer: UnsafeRawBufferPointer) throws(MediaError) -> Bool {
        guard range.count <= maximum else {
            throw MediaError(.valueOutOfRange, field: "NALUnitLength", byteOffset: range.lowerBound,
                            "a NAL unit of \(range.count) bytes does not fit a \(lengthSize)-byte length")
        }
        let type = Int(buffer[range.lowerBound] & 0x1F)
        guard type == 7 || type == 8 || type == 13 else { return true }
        let nal = Array(UnsafeRawBufferPointer(rebasing: buffer[range]))
        let id: Int
        do {
            id = try AVCC.parameterSetId(nal[...], type: type)
        } catch {
            // A damaged parameter set: kept where it is, reported, never put in the configuration.
            diagnostics.append(error.offset(by: range.lowerBound))
            return true
        }
        let key = type << 16 | id
        if let existing = firstById[key] {
            let stored = type == 7 ? sps[existing] : type == 8 ? pps[existing] : exts[existing]
            // Identical repeat: redundant once the configuration holds it.
            return !(stored == nal && placement == .configuration)
        }
        switch type {
        case 7: firstById[key] = sps.count; sps.append(nal)
        case 8: firstById[key] = pps.count; pps.append(nal)
        default: firstById[key] = exts.count; exts.append(nal)
        }
        return placement == .inBand
    }

    /// Writes the length and the unit at `offset` (the caller has checked that they fit).
    @inline(__always)
    package func write(_ range: Range<Int>, of buffer: UnsafeRawBufferPointer, to output: UnsafeMutableBufferPointer<UInt8>,
               at offset: Int) -> Int {
        let destination = UnsafeMutableRawPointer(output.baseAddress!) + offset
        let length = range.count
        switch lengthSize {
        case 4: destination.storeBytes(of: UInt32(truncatingIfNeeded: length).bigEndian, as: UInt32.self)
        case 2: destination.storeBytes(of: UInt16(truncatingIfNeeded: length).bigEndian, as: UInt16.self)
        default: destination.storeBytes(of: UInt8(truncatingIfNeeded: length), as: UInt8.self)
        }
        (destination + lengthSize).copyMemory(from: buffer.baseAddress! + range.lowerBound, byteCount: length)
        return offset &+ lengthSize &+ length
    }
}
