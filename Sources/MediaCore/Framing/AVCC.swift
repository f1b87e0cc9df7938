/// AVCC data: NAL units each preceded by its length as a 1-, 2- or 4-byte big-endian integer
/// (ISO/IEC 14496-15 clause 5.3.2, `NALUnitLength`), as in MP4 samples and VideoToolbox's
/// sample buffers. The length size comes from the configuration record
/// (`AVCDecoderConfigurationRecord.nalUnitLengthSize`).
public enum AVCC {
    /// Checks that a length size is 1, 2 or 4.
    ///
    /// - Throws: ``MediaError/Code/invalidLengthSize`` otherwise.
    public static func validate(lengthSize: Int) throws(MediaError) {
        guard lengthSize == 1 || lengthSize == 2 || lengthSize == 4 else {
            throw MediaError(.invalidLengthSize, field: "lengthSizeMinusOne", "NAL unit length size \(lengthSize) is not 1, 2 or 4")
        }
    }

    /// The largest NAL unit length a prefix of `lengthSize` bytes can hold.
    public static func maximumLength(lengthSize: Int) -> Int {
        lengthSize >= 4 ? Int(UInt32.max) : (1 << (8 * lengthSize)) - 1
    }

    /// Splits length-prefixed data into its NAL units.
    ///
    /// - Parameters:
    ///   - buffer: One sample (access unit) or a whole raw AVCC stream.
    ///   - lengthSize: The size of each length prefix: 1, 2 or 4.
    ///   - allowingEmptyNALUnits: When true, zero-length NAL units are skipped instead of
    ///     rejected (some muxers write them as padding).
    /// - Returns: The byte range of each NAL unit (header byte first), in order.
    /// - Throws: ``MediaError/Code/invalidLengthSize`` for a length size other than 1, 2 or 4;
    ///   ``MediaError/Code/truncated`` when fewer than `lengthSize` bytes remain for a length
    ///   field; ``MediaError/Code/lengthPastEnd`` when a length exceeds the bytes that follow it;
    ///   ``MediaError/Code/emptyNALUnit`` for a zero length. The error's `byteOffset` is that of
    ///   the length field.
    public static func nalUnits(in buffer: UnsafeRawBufferPointer, lengthSize: Int,
                                allowingEmptyNALUnits: Bool = false) throws(MediaError) -> [Range<Int>] {
        var result: [Range<Int>] = []
        try forEachNALUnit(in: buffer, lengthSize: lengthSize, allowingEmptyNALUnits: allowingEmptyNALUnits) { _, range in
            if !range.isEmpty { result.append(range) }
        }
        return result
    }

    /// Calls `body` with each NAL unit of length-prefixed data, in order: the one walk over AVCC
    /// length fields that every reader and rewriter of AVCC data in this package uses.
    ///
    /// - Parameters:
    ///   - buffer: One sample (access unit) or a whole raw AVCC stream.
    ///   - lengthSize: The size of each length prefix: 1, 2 or 4.
    ///   - allowingEmptyNALUnits: When true, a zero length is passed to `body` as an empty range
    ///     instead of being rejected.
    ///   - body: Called with the offset of each length field and the byte range of the NAL unit
    ///     that follows it (header byte first).
    /// - Throws: the errors of ``nalUnits(in:lengthSize:allowingEmptyNALUnits:)-(UnsafeRawBufferPointer,_,_)``,
    ///   and whatever `body` throws. NAL units before the offending length field have already
    ///   been passed to `body`.
    @inline(__always)
    public static func forEachNALUnit(in buffer: UnsafeRawBufferPointer, lengthSize: Int, allowingEmptyNALUnits: Bool = false,
                                      _ body: (_ lengthOffset: Int, _ range: Range<Int>) throws(MediaError) -> Void) throws(MediaError) {
        _ = try walk(buffer, lengthSize: lengthSize, allowingEmptyNALUnits: allowingEmptyNALUnits, toleratingAnnexB: false, body)
    }

    /// The one walk over AVCC length fields: calls `body` with each length field's offset and its
    /// NAL unit's range. With `toleratingAnnexB`, stops where `EmbeddedAnnexB`'s rule finds
    /// Annex-B instead of a length field and returns that offset; otherwise returns nil.
    @inline(__always)
    package static func walk(_ buffer: UnsafeRawBufferPointer, lengthSize: Int, allowingEmptyNALUnits: Bool, toleratingAnnexB: Bool,
                             _ body: (_ lengthOffset: Int, _ range: Range<Int>) throws(MediaError) -> Void) throws(MediaError) -> Int? {
        try validate(lengthSize: lengthSize)
        var position = 0
        // Once the lengths from a field that begins like a start code have held, every later
        // field lies on that same walk: no further check.
        var lengthsHold = false
        while position < buffer.count {
            if toleratingAnnexB && !lengthsHold && buffer[position] == 0
                && AnnexB.beginsWithStartCode(UnsafeRawBufferPointer(rebasing: buffer[position...])) {
                if EmbeddedAnnexB.lengthsFail(in: buffer, from: position, lengthSize: lengthSize,
                                              allowingEmptyNALUnits: allowingEmptyNALUnits) {
                    return position
                }
                lengthsHold = true
            }
            let length = try readLength(in: buffer, at: position, lengthSize: lengthSize)
            let start = position + lengthSize
            guard length > 0 || allowingEmptyNALUnits else {
                throw MediaError(.emptyNALUnit, field: "NALUnitLength", byteOffset: position, "zero-length NAL unit")
            }
            try body(position, start..<start + length)
            position = start + length
        }
        return nil
    }

    /// Splits length-prefixed data into its NAL units.
    ///
    /// See ``nalUnits(in:lengthSize:allowingEmptyNALUnits:)-(UnsafeRawBufferPointer,_,_)``.
    public static func nalUnits(in bytes: [UInt8], lengthSize: Int,
                                allowingEmptyNALUnits: Bool = false) throws(MediaError) -> [Range<Int>] {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in
                try nalUnits(in: buffer, lengthSize: lengthSize, allowingEmptyNALUnits: allowingEmptyNALUnits)
            }
        }
        return try result.get()
    }

    /// Appends one NAL unit with its length prefix.
    ///
    /// - Throws: ``MediaError/Code/invalidLengthSize`` for a length size other than 1, 2 or 4;
    ///   ``MediaError/Code/emptyNALUnit`` for an empty NAL unit;
    ///   ``MediaError/Code/valueOutOfRange`` when the NAL unit is too long for the length size.
    public static func append(nalUnit: some Collection<UInt8>, lengthSize: Int, to output: inout [UInt8]) throws(MediaError) {
        try validate(lengthSize: lengthSize)
        let length = nalUnit.count
        guard length > 0 else {
            throw MediaError(.emptyNALUnit, field: "NALUnitLength", "an empty NAL unit cannot be written")
        }
        guard length <= maximumLength(lengthSize: lengthSize) else {
            throw MediaError(.valueOutOfRange, field: "NALUnitLength",
                            "a NAL unit of \(length) bytes does not fit a \(lengthSize)-byte length")
        }
        appendLength(length, lengthSize: lengthSize, to: &output)
        output.append(contentsOf: nalUnit)
    }

    /// Joins NAL units into one length-prefixed buffer (one allocation).
    ///
    /// - Throws: as ``append(nalUnit:lengthSize:to:)``.
    public static func data(nalUnits: [[UInt8]], lengthSize: Int = 4) throws(MediaError) -> [UInt8] {
        try validate(lengthSize: lengthSize)
        var total = 0
        for unit in nalUnits { total += lengthSize + unit.count }
        var output: [UInt8] = []
        output.reserveCapacity(total)
        for unit in nalUnits { try append(nalUnit: unit, lengthSize: lengthSize, to: &output) }
        return output
    }

    // MARK: - Internals

    /// Reads the big-endian length at `position`, checking it against what remains.
    @inline(__always)
    package static func readLength(in buffer: UnsafeRawBufferPointer, at position: Int, lengthSize: Int) throws(MediaError) -> Int {
        let remaining = buffer.count - position
        guard remaining >= lengthSize else {
            throw MediaError(.truncated, field: "NALUnitLength", byteOffset: position,
                            "\(remaining) byte(s) left for a \(lengthSize)-byte length")
        }
        var length = 0
        for index in 0..<lengthSize { length = length << 8 | Int(buffer[position + index]) }
        guard length <= remaining - lengthSize else {
            throw MediaError(.lengthPastEnd, field: "NALUnitLength", byteOffset: position,
                            "length \(length) but only \(remaining - lengthSize) byte(s) follow")
        }
        return length
    }

    /// Appends `length` as a `lengthSize`-byte big-endian integer (the caller has checked it fits).
    @inline(__always)
    package static func appendLength(_ length: Int, lengthSize: Int, to output: inout [UInt8]) {
        BigEndian.append(length, count: lengthSize, to: &output)
    }

    /// Writes `length` as a `lengthSize`-byte big-endian integer over the `lengthSize` bytes at
    /// `position` of `output`: the length field of a NAL unit appended before its size was known
    /// (the caller has checked it fits).
    @inline(__always)
    package static func writeLength(_ length: Int, lengthSize: Int, in output: inout [UInt8], at position: Int) {
        BigEndian.write(length, count: lengthSize, to: &output, at: position)
    }
}
