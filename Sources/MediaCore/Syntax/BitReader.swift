/// Reads bits and Exp-Golomb codes from an RBSP (clause 7.2 and 9.1), most significant bit first.
///
/// Every read names the syntax element it reads, so that a failure says which element, at which
/// bit. When ``recordsElements`` is true, every named read is also appended to ``elements`` in
/// bitstream order — the form `h264 inspect --json` prints, which matches FFmpeg's
/// `trace_headers` names.
public struct BitReader: Sendable {
    /// The RBSP bytes being read.
    public let bytes: [UInt8]
    /// The position of the next bit to read, counted from the first bit of ``bytes``.
    public private(set) var bitOffset: Int = 0
    /// Whether named reads are appended to ``elements``.
    public var recordsElements: Bool
    /// The syntax elements read so far (name and value), when ``recordsElements`` is true.
    public var elements: [(name: String, value: Int)] = []
    /// Tolerable problems met so far, in bitstream order: values out of range in elements that
    /// do not change how the rest is read. Each has the code, field and bit offset the error
    /// would have had; the value was kept.
    public private(set) var diagnostics: [MediaError] = []

    /// Creates a reader over RBSP bytes (emulation prevention already removed; see ``RBSP``).
    public init(_ bytes: [UInt8], recordsElements: Bool = false) {
        self.bytes = bytes
        self.recordsElements = recordsElements
    }

    /// Bits left to read.
    public var bitsRemaining: Int { bytes.count * 8 - bitOffset }

    /// True when the reader stands on a byte boundary.
    public var isByteAligned: Bool { bitOffset & 7 == 0 }

    /// Appends an element to ``elements`` without reading (for values that are implied or derived).
    public mutating func record(_ name: @autoclosure () -> String, _ value: Int) {
        if recordsElements { elements.append((name(), value)) }
    }

    /// Runs `body` with a ``BitCursor`` over ``bytes`` at ``bitOffset`` (the one implementation
    /// of the reads), and takes over where it stopped and the problems it met.
    private mutating func withCursor<Value>(_ body: (inout BitCursor) throws(MediaError) -> Value) throws(MediaError) -> Value {
        let start = bitOffset
        let (result, offset, found) = bytes.withUnsafeBufferPointer { buffer in
            var cursor = BitCursor(buffer, bitOffset: start)
            let result = Result { () throws(MediaError) in try body(&cursor) }
            return (result, cursor.bitOffset, cursor.diagnostics)
        }
        bitOffset = offset
        if !found.isEmpty { diagnostics += found }
        return try result.get()
    }

    /// Reads `count` bits (0…32) as an unsigned value: `u(n)`.
    public mutating func readBits(_ count: Int, _ name: @autoclosure () -> String) throws(MediaError) -> Int {
        let value = try withCursor { (cursor) throws(MediaError) in try cursor.readBits(count, name()) }
        if recordsElements { elements.append((name(), value)) }
        return value
    }

    /// Reads one bit as a flag: `u(1)`.
    public mutating func readFlag(_ name: @autoclosure () -> String) throws(MediaError) -> Bool {
        try readBits(1, name()) == 1
    }

    /// Reads an unsigned Exp-Golomb code, `ue(v)`, and checks it against `range`.
    ///
    /// - Throws: ``MediaError/Code/expGolombOverflow`` for 32 or more leading zeros,
    ///   ``MediaError/Code/valueOutOfRange`` when the value is outside `range`,
    ///   ``MediaError/Code/truncated`` when the data ends.
    public mutating func readUE(_ name: @autoclosure () -> String, range: ClosedRange<Int> = 0...Int(UInt32.max - 1)) throws(MediaError) -> Int {
        let value = try withCursor { (cursor) throws(MediaError) in try cursor.readUE(name(), range: range) }
        if recordsElements { elements.append((name(), value)) }
        return value
    }

    /// Reads an unsigned Exp-Golomb code no larger than `max`.
    public mutating func readUE(_ name: @autoclosure () -> String, max: Int) throws(MediaError) -> Int {
        try readUE(name(), range: 0...max)
    }

    /// Reads an unsigned Exp-Golomb code whose range is tolerable: a value outside `range` is
    /// kept and recorded in ``diagnostics`` as ``MediaError/Code/valueOutOfRange`` (for elements
    /// that do not change how the rest is read, such as the VUI's bitstream restriction).
    ///
    /// - Throws: ``MediaError/Code/expGolombOverflow`` and ``MediaError/Code/truncated`` only.
    public mutating func readUE(_ name: @autoclosure () -> String, tolerating range: ClosedRange<Int>) throws(MediaError) -> Int {
        let value = try withCursor { (cursor) throws(MediaError) in try cursor.readUE(name(), tolerating: range) }
        if recordsElements { elements.append((name(), value)) }
        return value
    }

    /// Reads `count` bits as an unsigned value whose allowed values are `allowed`: any other is
    /// kept and recorded in ``diagnostics`` as ``MediaError/Code/valueOutOfRange`` (reserved
    /// values of tolerable elements, e.g. `colour_primaries` or `reserved_zero_2bits`).
    public mutating func readBits(_ count: Int, _ name: @autoclosure () -> String, tolerating allowed: (Int) -> Bool,
                                  _ expectation: @autoclosure () -> String) throws(MediaError) -> Int {
        let start = bitOffset
        let value = try readBits(count, name())
        if !allowed(value) {
            diagnostics.append(MediaError(.valueOutOfRange, field: name(), bitOffset: start,
                                         "\(value) is reserved or not allowed, expected \(expectation()) (kept)"))
        }
        return value
    }

    /// Records a tolerable problem in ``diagnostics`` (the value it concerns was kept).
    public mutating func warn(_ code: MediaError.Code, _ name: String, at bit: Int, _ message: String) {
        diagnostics.append(MediaError(code, field: name, bitOffset: bit, message))
    }

    /// Reads a signed Exp-Golomb code, `se(v)`, and checks it against `range`.
    public mutating func readSE(_ name: @autoclosure () -> String, range: ClosedRange<Int> = Int(Int32.min) + 1...Int(Int32.max)) throws(MediaError) -> Int {
        let value = try withCursor { (cursor) throws(MediaError) in try cursor.readSE(name(), range: range) }
        if recordsElements { elements.append((name(), value)) }
        return value
    }

    /// Skips `count` bits.
    public mutating func skipBits(_ count: Int, _ name: @autoclosure () -> String = "skipped bits") throws(MediaError) {
        try withCursor { (cursor) throws(MediaError) in try cursor.skipBits(count, name()) }
    }

    /// `more_rbsp_data()` (clause 7.2): true when data remains before the `rbsp_stop_one_bit`.
    ///
    /// The stop bit is the last 1 bit of the RBSP; trailing zero bytes (e.g. `cabac_zero_word`s
    /// or stray `trailing_zero_8bits`) are ignored.
    public func moreRBSPData() -> Bool {
        var last = bytes.count - 1
        while last >= 0 && bytes[last] == 0 { last -= 1 }
        guard last >= 0 else { return false }
        let byte = bytes[last]
        let stopBitIndex = last * 8 + (7 - byte.trailingZeroBitCount)
        return bitOffset < stopBitIndex
    }

    /// Reads `rbsp_trailing_bits()`: a 1 bit, then 0 bits to the byte boundary.
    ///
    /// - Throws: ``MediaError/Code/invalidTrailingBits`` when the stop bit is 0 or alignment bits are 1.
    public mutating func readTrailingBits() throws(MediaError) {
        let start = bitOffset
        let stop = try readBits(1, "rbsp_stop_one_bit")
        guard stop == 1 else {
            throw MediaError(.invalidTrailingBits, field: "rbsp_stop_one_bit", bitOffset: start, "rbsp_stop_one_bit is 0")
        }
        while !isByteAligned {
            let at = bitOffset
            if try readBits(1, "rbsp_alignment_zero_bit") != 0 {
                throw MediaError(.invalidTrailingBits, field: "rbsp_alignment_zero_bit", bitOffset: at, "rbsp_alignment_zero_bit is 1")
            }
        }
    }
}
