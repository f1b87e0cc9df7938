// Conversion between AVCC (ISO/IEC 14496-15 length prefixes) and Annex-B (ITU-T H.264 Annex B
// start codes), in both directions.

// MARK: - AVCC → Annex-B

extension AnnexB {
    /// Which start code precedes each NAL unit written by the AVCC → Annex-B conversions.
    public enum StartCodeStyle: Hashable, Sendable {
        /// `00 00 00 01` before parameter sets (SPS, PPS, SPS extension) and before the first NAL
        /// unit of each access unit, where clause B.1.2 requires the `zero_byte`; `00 00 01`
        /// elsewhere. This is what FFmpeg's `h264_mp4toannexb` writes.
        case minimal
        /// `00 00 00 01` before every NAL unit, as the in-place conversion
        /// (``convertAVCCInPlace(_:)-([UInt8])``) produces.
        case fourByte
    }

    /// Converts one AVCC sample (one access unit) to Annex-B.
    ///
    /// Does what FFmpeg's `h264_mp4toannexb` does: when the sample holds an IDR slice and
    /// `parameterSets` is given, the record's SPS (and SPS extensions) and PPS are inserted right
    /// before the first IDR slice unless the sample already carries them in-band before it (each
    /// kind is checked on its own: a sample with an in-band SPS but no PPS gets only the PPS).
    ///
    /// A sample that begins with a start code (`00 00 01` or `00 00 00 01`) and does not parse
    /// as AVCC is taken to be Annex-B already and returned unchanged, as FFmpeg passes such
    /// samples through. A genuine AVCC sample whose first length happens to read `00 00 01 xx`
    /// or `00 00 00 01` still parses as AVCC and is converted.
    ///
    /// - Parameters:
    ///   - sample: Length-prefixed NAL units of one access unit.
    ///   - lengthSize: The length prefix size: 1, 2 or 4.
    ///   - parameterSets: The stream's configuration record, to insert SPS/PPS before IDR
    ///     pictures; `nil` to insert nothing.
    ///   - startCodes: Which start codes to write (``StartCodeStyle/minimal`` by default).
    /// - Returns: The Annex-B bytes, built in one allocation.
    /// - Throws: the errors of ``AVCC/nalUnits(in:lengthSize:allowingEmptyNALUnits:)-([UInt8],_,_)``.
    public static func fromAVCC(_ sample: [UInt8], lengthSize: Int, parameterSets: AVCDecoderConfigurationRecord? = nil,
                                startCodes: StartCodeStyle = .minimal) throws(H264Error) -> [UInt8] {
        try convertFromAVCC(sample, lengthSize: lengthSize, parameterSets: parameterSets, startCodes: startCodes, wholeStream: false)
    }

    /// Converts a raw AVCC stream — many samples back to back, without container, as in a
    /// `.264` file written with length prefixes — to Annex-B.
    ///
    /// Sample boundaries are not marked in such a stream, so access units are found as clause
    /// 7.4.1.2.3 describes: a new one begins with an access unit delimiter, with an SEI, SPS,
    /// PPS or NAL unit of type 14…18 that follows a slice, with the NAL unit after an end of
    /// sequence or end of stream, or with a slice (types 1, 2, 5) whose `first_mb_in_slice` is
    /// 0 that follows a slice. (Arbitrary slice order can make the last rule start an access
    /// unit early; that only changes a start code's length or where parameter sets are
    /// inserted.) Each access unit is then treated as ``fromAVCC(_:lengthSize:parameterSets:startCodes:)``
    /// treats a sample.
    ///
    /// - Throws: the errors of ``AVCC/nalUnits(in:lengthSize:allowingEmptyNALUnits:)-([UInt8],_,_)``.
    public static func fromAVCCStream(_ stream: [UInt8], lengthSize: Int, parameterSets: AVCDecoderConfigurationRecord? = nil,
                                      startCodes: StartCodeStyle = .minimal) throws(H264Error) -> [UInt8] {
        try convertFromAVCC(stream, lengthSize: lengthSize, parameterSets: parameterSets, startCodes: startCodes, wholeStream: true)
    }

    /// Rewrites AVCC data with 4-byte lengths to Annex-B in place: each length becomes
    /// `00 00 00 01`.
    ///
    /// One pass that costs a few operations per NAL unit and touches no payload byte. Nothing
    /// is inserted (the buffer cannot grow): parameter sets must already be in-band. Data that
    /// begins with a start code and does not parse as AVCC is left as it is (already Annex-B).
    ///
    /// On error the NAL units before the bad length field have already been rewritten (the
    /// error's `byteOffset` says where the conversion stopped); validating first would cost a
    /// second walk over the buffer's length fields.
    ///
    /// - Throws: ``H264Error/Code/truncated``, ``H264Error/Code/lengthPastEnd`` or
    ///   ``H264Error/Code/emptyNALUnit``, with the byte offset of the length field.
    public static func convertAVCCInPlace(_ buffer: UnsafeMutableRawBufferPointer) throws(H264Error) {
        let readOnly = UnsafeRawBufferPointer(buffer)
        guard let base = buffer.baseAddress else { return }
        // Annex-B already, or AVCC whose first length reads 00 00 00 01 / 00 00 01 xx? Only a
        // full parse (without writing) can tell.
        if beginsWithStartCode(readOnly) && !isValidFourByteAVCC(readOnly) { return }
        let startCode = UInt32(1).bigEndian
        var position = 0
        while position < buffer.count {
            let length = try AVCC.readLength(in: readOnly, at: position, lengthSize: 4)
            guard length > 0 else {
                throw H264Error(.emptyNALUnit, field: "NALUnitLength", byteOffset: position, "zero-length NAL unit")
            }
            base.storeBytes(of: startCode, toByteOffset: position, as: UInt32.self)
            position += 4 + length
        }
    }

    /// True when the whole buffer splits into non-empty NAL units with 4-byte lengths.
    private static func isValidFourByteAVCC(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var position = 0
        while position < buffer.count {
            guard let length = try? AVCC.readLength(in: buffer, at: position, lengthSize: 4), length > 0 else { return false }
            position += 4 + length
        }
        return true
    }

    /// Rewrites AVCC data with 4-byte lengths to Annex-B in place (see
    /// ``convertAVCCInPlace(_:)-(UnsafeMutableRawBufferPointer)``).
    public static func convertAVCCInPlace(_ bytes: inout [UInt8]) throws(H264Error) {
        let result = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(H264Error) in try convertAVCCInPlace(buffer) }
        }
        try result.get()
    }

    // MARK: Internals

    /// A piece of Annex-B output: a NAL unit from the input, or a parameter set from the record.
    private enum Piece {
        case input(Range<Int>)
        case parameterSet([UInt8])
    }

    private static func convertFromAVCC(_ bytes: [UInt8], lengthSize: Int, parameterSets: AVCDecoderConfigurationRecord?,
                                        startCodes: StartCodeStyle, wholeStream: Bool) throws(H264Error) -> [UInt8] {
        let units: [Range<Int>]
        do throws(H264Error) {
            units = try AVCC.nalUnits(in: bytes, lengthSize: lengthSize)
        } catch {
            let annexB = bytes.withUnsafeBytes { beginsWithStartCode($0) }
            if annexB && error.code != .invalidLengthSize { return bytes }
            throw error
        }
        return bytes.withUnsafeBytes { buffer in
            var total = 0
            plan(buffer, units: units, parameterSets: parameterSets, startCodes: startCodes, wholeStream: wholeStream) { startCode, piece in
                switch piece {
                case .input(let range): total += startCode + range.count
                case .parameterSet(let unit): total += startCode + unit.count
                }
            }
            var output: [UInt8] = []
            output.reserveCapacity(total)
            plan(buffer, units: units, parameterSets: parameterSets, startCodes: startCodes, wholeStream: wholeStream) { startCode, piece in
                if startCode == 4 { output.append(0) }
                output.append(0)
                output.append(0)
                output.append(1)
                switch piece {
                case .input(let range): output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[range]))
                case .parameterSet(let unit): output.append(contentsOf: unit)
                }
            }
            return output
        }
    }

    /// Calls `visit` with each piece of output and its start code length, in order.
    private static func plan(_ buffer: UnsafeRawBufferPointer, units: [Range<Int>], parameterSets: AVCDecoderConfigurationRecord?,
                             startCodes: StartCodeStyle, wholeStream: Bool, _ visit: (Int, Piece) -> Void) {
        var boundaries = AccessUnitBoundaryDetector()
        var sawSPS = false
        var sawPPS = false
        var handledIDR = false
        for (index, range) in units.enumerated() {
            let type = buffer[range.lowerBound] & 0x1F
            let payload: UInt8? = range.count > 1 ? buffer[range.lowerBound + 1] : nil
            let startsAccessUnit = boundaries.startsAccessUnit(type: type, firstPayloadByte: payload)
            let first = wholeStream ? startsAccessUnit : index == 0
            if first {
                sawSPS = false
                sawPPS = false
                handledIDR = false
            }
            if type == NALUnitType.idrSlice.rawValue && !handledIDR, let parameterSets {
                handledIDR = true
                if !sawSPS {
                    for sps in parameterSets.sequenceParameterSets { visit(4, .parameterSet(sps)) }
                    for ext in parameterSets.highProfileExtension?.sequenceParameterSetExtensions ?? [] {
                        visit(4, .parameterSet(ext))
                    }
                }
                if !sawPPS {
                    for pps in parameterSets.pictureParameterSets { visit(4, .parameterSet(pps)) }
                }
            }
            if type == NALUnitType.sequenceParameterSet.rawValue { sawSPS = true }
            if type == NALUnitType.pictureParameterSet.rawValue { sawPPS = true }
            let isParameterSet = type == 7 || type == 8 || type == 13
            visit(first || isParameterSet || startCodes == .fourByte ? 4 : 3, .input(range))
        }
    }
}

/// Finds the first NAL unit of each access unit in a sequence of NAL units (clause 7.4.1.2.3),
/// looking only at NAL unit types and the first bit of `first_mb_in_slice`.
struct AccessUnitBoundaryDetector {
    private var started = false
    private var sawSlice = false
    private var endedSequence = false

    /// Whether the NAL unit of `type`, whose first byte after the header is `firstPayloadByte`,
    /// begins a new access unit. Call once per NAL unit, in order.
    mutating func startsAccessUnit(type: UInt8, firstPayloadByte: UInt8?) -> Bool {
        let isNew: Bool
        if !started || endedSequence || type == 9 {
            isNew = true
        } else if sawSlice {
            switch type {
            case 6, 7, 8, 14...18: isNew = true
            // first_mb_in_slice is ue(v): its first bit is 1 exactly when it is 0.
            case 1, 2, 5: isNew = (firstPayloadByte ?? 0) & 0x80 != 0
            default: isNew = false
            }
        } else {
            isNew = false
        }
        started = true
        if isNew { sawSlice = false }
        if (1...5).contains(type) { sawSlice = true }
        endedSequence = type == 10 || type == 11
        return isNew
    }
}

// MARK: - Annex-B → AVCC

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

        /// Creates a result.
        public init(data: [UInt8], lengthSize: Int, sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]],
                    sequenceParameterSetExtensions: [[UInt8]]) {
            self.data = data
            self.lengthSize = lengthSize
            self.sequenceParameterSets = sequenceParameterSets
            self.pictureParameterSets = pictureParameterSets
            self.sequenceParameterSetExtensions = sequenceParameterSetExtensions
        }

        /// A configuration record holding the parameter sets found, with this length size.
        ///
        /// - Throws: ``H264Error/Code/missingParameterSet`` without an SPS or a PPS.
        public func configurationRecord() throws(H264Error) -> AVCDecoderConfigurationRecord {
            var record = try AVCDecoderConfigurationRecord(sequenceParameterSets: sequenceParameterSets,
                                                           pictureParameterSets: pictureParameterSets,
                                                           nalUnitLengthSize: lengthSize)
            if !sequenceParameterSetExtensions.isEmpty {
                var ext = record.highProfileExtension ?? .init()
                ext.sequenceParameterSetExtensions = sequenceParameterSetExtensions
                record.highProfileExtension = ext
            }
            return record
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
    /// - Throws: ``H264Error/Code/invalidLengthSize``; ``H264Error/Code/missingStartCode`` when
    ///   a non-zero byte precedes the first start code; ``H264Error/Code/valueOutOfRange`` (with
    ///   the NAL unit's offset) when a NAL unit is too long for the length size.
    public static func fromAnnexB(_ bytes: [UInt8], lengthSize: Int = 4,
                                  parameterSets: ParameterSetPlacement = .inBand) throws(H264Error) -> ConversionResult {
        try validate(lengthSize: lengthSize)
        var converter = AnnexBToAVCC(lengthSize: lengthSize, placement: parameterSets)
        let outcome = bytes.withUnsafeBytes { buffer in
            Result { () throws(H264Error) -> [UInt8] in try converter.convert(buffer) }
        }
        let data = try outcome.get()
        return ConversionResult(data: data, lengthSize: lengthSize, sequenceParameterSets: converter.sps,
                                pictureParameterSets: converter.pps, sequenceParameterSetExtensions: converter.exts)
    }

    /// The id of an SPS (`seq_parameter_set_id`), PPS (`pic_parameter_set_id`) or SPS extension
    /// NAL unit, or `nil` when it cannot be read.
    static func parameterSetId(_ nalUnit: ArraySlice<UInt8>, type: Int) -> Int? {
        // SPS: profile_idc, constraint flags and level_idc (3 bytes) precede the id.
        let skip = type == 7 ? 4 : 1
        guard nalUnit.count > skip else { return nil }
        var reader = BitReader(RBSP.decode(nalUnit.dropFirst(skip), limit: 8))
        return try? reader.readUE(type == 8 ? "pic_parameter_set_id" : "seq_parameter_set_id", max: type == 8 ? 255 : 31)
    }
}

/// The Annex-B → AVCC conversion: which NAL units go out, the parameter sets seen, and the copy.
private struct AnnexBToAVCC {
    let lengthSize: Int
    let placement: AVCC.ParameterSetPlacement
    let maximum: Int
    var sps: [[UInt8]] = []
    var pps: [[UInt8]] = []
    var exts: [[UInt8]] = []
    /// The first parameter set of each kind and id goes into the configuration; a repeat with
    /// the same bytes is redundant; one with the same id but other bytes is an in-stream update.
    /// Key: type << 16 | id → index in its list.
    var firstById: [Int: Int] = [:]

    /// Inputs from this size on are converted in one pass (see ``AVCC/fromAnnexB(_:lengthSize:parameterSets:)``).
    static let onePassThreshold = 1 << 20

    init(lengthSize: Int, placement: AVCC.ParameterSetPlacement) {
        self.lengthSize = lengthSize
        self.placement = placement
        self.maximum = AVCC.maximumLength(lengthSize: lengthSize)
    }

    mutating func convert(_ buffer: UnsafeRawBufferPointer) throws(H264Error) -> [UInt8] {
        if buffer.count < Self.onePassThreshold {
            let units = AnnexB.nalUnits(in: buffer)
            try checkLeadingBytes(buffer, before: units.first?.startCodeOffset ?? buffer.count)
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
        var failure: H264Error?
        let data = [UInt8](unsafeUninitializedCapacity: capacity) { output, initialized in
            var written = 0
            var first = true
            do throws(H264Error) {
                try AnnexB.forEachNALUnit(in: buffer) { (unit: NALUnitLocation) throws(H264Error) in
                    if first {
                        first = false
                        try checkLeadingBytes(buffer, before: unit.startCodeOffset)
                    }
                    guard try admit(unit.range, in: buffer) else { return }
                    guard lengthSize &+ unit.range.count <= output.count &- written else {
                        throw H264Error(.overflow, field: "NALUnitLength", byteOffset: unit.range.lowerBound,
                                        "output larger than its bound")
                    }
                    written = write(unit.range, of: buffer, to: output, at: written)
                }
                if first { try checkLeadingBytes(buffer, before: buffer.count) }
            } catch {
                failure = error
            }
            initialized = written
        }
        if let failure { throw failure }
        return data
    }

    /// Throws ``H264Error/Code/missingStartCode`` when a byte before the first start code is not zero.
    func checkLeadingBytes(_ buffer: UnsafeRawBufferPointer, before leading: Int) throws(H264Error) {
        if let bad = buffer[0..<leading].firstIndex(where: { $0 != 0 }) {
            throw H264Error(.missingStartCode, field: "start_code_prefix_one_3bytes", byteOffset: bad,
                            "\(leading) byte(s) before the first start code, not all zero")
        }
    }

    /// Checks a unit's length, records it when it is the first parameter set of its id, and
    /// says whether it goes into the output. Call once per unit, in order.
    mutating func admit(_ range: Range<Int>, in buffer: UnsafeRawBufferPointer) throws(H264Error) -> Bool {
        guard range.count <= maximum else {
            throw H264Error(.valueOutOfRange, field: "NALUnitLength", byteOffset: range.lowerBound,
                            "a NAL unit of \(range.count) bytes does not fit a \(lengthSize)-byte length")
        }
        let type = Int(buffer[range.lowerBound] & 0x1F)
        guard type == 7 || type == 8 || type == 13 else { return true }
        let nal = Array(UnsafeRawBufferPointer(rebasing: buffer[range]))
        guard let id = AVCC.parameterSetId(nal[...], type: type) else { return true }
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
    func write(_ range: Range<Int>, of buffer: UnsafeRawBufferPointer, to output: UnsafeMutableBufferPointer<UInt8>,
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

// MARK: - Extradata

extension AVCDecoderConfigurationRecord {
    /// Reads codec extradata in either form found in the wild: an `avcC` record (first byte 1,
    /// the `configurationVersion`), or Annex-B parameter sets (anything else), as FFmpeg's
    /// `ff_h264_decode_extradata` decides.
    ///
    /// From Annex-B extradata the SPS, PPS and SPS extension NAL units are taken (other NAL
    /// units are ignored) and a record is built from them with a 4-byte length size; profile,
    /// compatibility and level come from the first SPS.
    ///
    /// - Throws: the errors of ``init(parsing:)`` for an `avcC`; for Annex-B,
    ///   ``H264Error/Code/missingStartCode`` when it does not begin with a start code and
    ///   ``H264Error/Code/missingParameterSet`` without an SPS or PPS; ``H264Error/Code/truncated``
    ///   for empty extradata.
    public init(extradata: [UInt8]) throws(H264Error) {
        guard let first = extradata.first else {
            throw H264Error(.truncated, field: "extradata", byteOffset: 0, "empty extradata")
        }
        if first == 1 {
            try self.init(parsing: extradata)
            return
        }
        let units = try AnnexB.nalUnits(validating: extradata)
        guard !units.isEmpty else {
            throw H264Error(.missingStartCode, field: "extradata", byteOffset: 0, "extradata is neither avcC nor Annex-B")
        }
        let converted = try AVCC.fromAnnexB(extradata, lengthSize: 4, parameterSets: .configuration)
        self = try converted.configurationRecord()
    }
}
