/// Where one NAL unit lies in an Annex-B byte stream (ITU-T H.264 Annex B).
///
/// ```
///  … prev NAL │ 00 00 (trailing_zero_8bits) │ 00 (zero_byte) 00 00 01 │ NAL unit … │ 00 00 00 01 …
///             │ belong to the previous unit  │ ↑ startCodeOffset       │ ↑ range    ↑
/// ```
public struct NALUnitLocation: Hashable, Sendable {
    /// The offset of the first byte of this unit's start code: of its `zero_byte` when the
    /// `start_code_prefix_one_3bytes` is preceded by a zero byte (a 4-byte start code), otherwise
    /// of the `00 00 01` itself. Any further zero bytes before it (`trailing_zero_8bits`) belong
    /// to the previous unit, or — before the first unit — to the leading bytes.
    public var startCodeOffset: Int
    /// The NAL unit's bytes, header byte first, without the start code and with trailing zero
    /// bytes trimmed (a NAL unit never ends in `0x00`, clause 7.4.1). Never empty.
    public var range: Range<Int>

    /// Creates a location.
    public init(startCodeOffset: Int, range: Range<Int>) {
        self.startCodeOffset = startCodeOffset
        self.range = range
    }

    /// The length of the start code: 3 or 4 bytes.
    public var startCodeLength: Int { range.lowerBound - startCodeOffset }
}

/// Annex-B byte streams (ITU-T H.264 Annex B): NAL units separated by start codes
/// `00 00 01`, optionally preceded by a `zero_byte` (`00 00 00 01`).
///
/// The splitting rules used by every function here, and by ``AnnexBStreamReader``:
/// - 3- and 4-byte start codes are both recognised; `leading_zero_8bits` and
///   `trailing_zero_8bits` (any number of extra zero bytes) are allowed.
/// - Bytes before the first start code are not part of any NAL unit. ``nalUnits(in:)-([UInt8])``
///   ignores them (the first location's ``NALUnitLocation/startCodeOffset`` says how many there
///   were); ``nalUnits(validating:)`` throws ``MediaError/Code/missingStartCode`` when any of
///   them is non-zero.
/// - Empty NAL units (a start code directly followed by another start code or by the end of
///   the data, possibly with zero bytes in between) are skipped: every reported unit has at
///   least its header byte.
public enum AnnexB {
    /// A start code with its `zero_byte`: `00 00 00 01`.
    public static let fourByteStartCode: [UInt8] = [0, 0, 0, 1]
    /// A start code without `zero_byte`: `00 00 01`.
    public static let threeByteStartCode: [UInt8] = [0, 0, 1]

    /// Finds every NAL unit in an Annex-B byte stream.
    ///
    /// Runs in time linear in the buffer, scanning 64 bytes at a time for adjacent zero bytes
    /// and looking at single bytes only near them. One allocation: the result array.
    ///
    /// - Parameter buffer: The whole stream (or any whole number of NAL units with their start codes).
    /// - Returns: The NAL units in order; empty when there is no start code.
    public static func nalUnits(in buffer: UnsafeRawBufferPointer) -> [NALUnitLocation] {
        var result: [NALUnitLocation] = []
        forEachNALUnit(in: buffer) { result.append($0) }
        return result
    }

    /// Calls `body` with each NAL unit of an Annex-B byte stream, in order, as it is found (so
    /// its bytes are still in cache): the loop behind ``nalUnits(in:)-(UnsafeRawBufferPointer)``.
    @inline(__always)
    package static func forEachNALUnit<E: Error>(in buffer: UnsafeRawBufferPointer,
                                         _ body: (NALUnitLocation) throws(E) -> Void) throws(E) {
        guard var prefix = findStartCodePrefix(in: buffer, from: 0) else { return }
        var startCodeOffset = startCodeOffset(ofPrefixAt: prefix, in: buffer, lowerBound: 0)
        while true {
            let payloadStart = prefix &+ 3
            let next = findStartCodePrefix(in: buffer, from: payloadStart)
            let end = trimmedEnd(in: buffer, from: payloadStart, to: next ?? buffer.count)
            if end > payloadStart {
                try body(NALUnitLocation(startCodeOffset: startCodeOffset, range: payloadStart..<end))
            }
            guard let next else { return }
            startCodeOffset = self.startCodeOffset(ofPrefixAt: next, in: buffer, lowerBound: payloadStart)
            prefix = next
        }
    }

    /// Finds every NAL unit in an Annex-B byte stream.
    ///
    /// See ``nalUnits(in:)-(UnsafeRawBufferPointer)``.
    public static func nalUnits(in bytes: [UInt8]) -> [NALUnitLocation] {
        bytes.withUnsafeBytes { nalUnits(in: $0) }
    }

    /// Finds every NAL unit, requiring the data to begin with a start code.
    ///
    /// Zero bytes before the first start code (`leading_zero_8bits`, clause B.2) are allowed;
    /// empty input gives no NAL units.
    ///
    /// - Throws: ``MediaError/Code/missingStartCode`` (with the offset of the first offending
    ///   byte) when a non-zero byte comes before the first start code (so also when input with
    ///   a non-zero byte holds no start code at all).
    public static func nalUnits(validating bytes: [UInt8]) throws(MediaError) -> [NALUnitLocation] {
        let units = nalUnits(in: bytes)
        // Without units there may still be a start code (one at the very end, or only empty
        // units): what precedes it is the leading part.
        let leading = units.first?.startCodeOffset ?? firstStartCode(in: bytes) ?? bytes.count
        let check = bytes.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in try checkLeadingBytes(buffer, before: leading) }
        }
        try check.get()
        return units
    }

    /// The one leading-garbage check: throws ``MediaError/Code/missingStartCode`` (with the offset
    /// of the first offending byte) when a byte before `leading`, the first start code, is not zero.
    package static func checkLeadingBytes(_ buffer: UnsafeRawBufferPointer, before leading: Int) throws(MediaError) {
        if let bad = buffer[0..<leading].firstIndex(where: { $0 != 0 }) {
            throw MediaError(.missingStartCode, field: "start_code_prefix_one_3bytes", byteOffset: bad,
                            "\(leading) byte(s) before the first start code, not all zero")
        }
    }

    /// The offset of the first start code at or after `offset`, counting its `zero_byte` when
    /// the `00 00 01` is preceded by a zero at or after `offset`.
    ///
    /// - Returns: `nil` when no complete `00 00 01` begins at or after `offset`.
    public static func firstStartCode(in buffer: UnsafeRawBufferPointer, from offset: Int = 0) -> Int? {
        guard let prefix = findStartCodePrefix(in: buffer, from: offset) else { return nil }
        return startCodeOffset(ofPrefixAt: prefix, in: buffer, lowerBound: max(offset, 0))
    }

    /// The offset of the first start code at or after `offset` (see
    /// ``firstStartCode(in:from:)-(UnsafeRawBufferPointer,_)``).
    public static func firstStartCode(in bytes: [UInt8], from offset: Int = 0) -> Int? {
        bytes.withUnsafeBytes { firstStartCode(in: $0, from: offset) }
    }

    /// True when the data begins with `00 00 01` or `00 00 00 01`.
    public static func beginsWithStartCode(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard buffer.count >= 3, buffer[0] == 0, buffer[1] == 0 else { return false }
        if buffer[2] == 1 { return true }
        return buffer.count >= 4 && buffer[2] == 0 && buffer[3] == 1
    }

    // MARK: - Scanner

    /// The offset of the first `00 00 01` beginning at or after `start` (all three bytes inside
    /// the buffer), or `nil`.
    ///
    /// A start code holds two adjacent zero bytes, which entropy-coded data never does
    /// elsewhere (emulation prevention, clause 7.4.1, breaks every `00 00` that is not followed
    /// by a byte > 3). So 64 bytes are tested at a time for such a pair: four 16-byte vectors
    /// `a` at `i + 16k` are OR-ed with the vectors `b` one byte further on, giving a zero byte
    /// exactly where a pair begins; the word trick `(x - 0x0101…) & ~x & 0x8080…` on 64-bit
    /// lanes is non-zero exactly when `x` has a zero byte. Only a block that may hold a pair is
    /// looked at byte by byte, with the skip rules of a three-byte pattern (a byte > 1 at
    /// `j + 2` rules out `j`, `j + 1` and `j + 2`).
    ///
    /// With SSE2 only (the x86-64 baseline) this is about 35 instructions per 64 bytes and
    /// reaches memory bandwidth: a little over `memcpy` throughput on the conformance streams
    /// (see the README's Benchmarks section).
    @inline(__always)
    package static func findStartCodePrefix(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = buffer.count
        guard count >= 3, let base = buffer.baseAddress else { return nil }
        let last = count &- 3 // the last offset at which a 00 00 01 can begin
        var i = max(start, 0)
        let ones = SIMD2<UInt64>(repeating: 0x0101_0101_0101_0101)
        let highs = SIMD2<UInt64>(repeating: 0x8080_8080_8080_8080)
        @inline(__always)
        func zeroBytes(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD2<UInt64> {
            let x = unsafeBitCast(a | b, to: SIMD2<UInt64>.self)
            return (x &- ones) & ~x
        }
        while i <= last {
            var blockEnd = last &+ 1
            if count &- i >= 65 { // 64 pair starts, the last pair's second byte at i + 64
                let p = base + i
                typealias Vector = SIMD16<UInt8>
                let zeros = zeroBytes(p.loadUnaligned(as: Vector.self), p.loadUnaligned(fromByteOffset: 1, as: Vector.self))
                    | zeroBytes(p.loadUnaligned(fromByteOffset: 16, as: Vector.self), p.loadUnaligned(fromByteOffset: 17, as: Vector.self))
                    | zeroBytes(p.loadUnaligned(fromByteOffset: 32, as: Vector.self), p.loadUnaligned(fromByteOffset: 33, as: Vector.self))
                    | zeroBytes(p.loadUnaligned(fromByteOffset: 48, as: Vector.self), p.loadUnaligned(fromByteOffset: 49, as: Vector.self))
                let flagged = zeros & highs
                if flagged[0] | flagged[1] == 0 {
                    // No two adjacent zero bytes begin in i..<i+64: no start code begins there.
                    i &+= 64
                    continue
                }
                blockEnd = min(i &+ 64, last &+ 1)
            }
            // Byte-wise inside the block (or the tail), with skips; i + 2 < count throughout.
            while i < blockEnd {
                let third = base.load(fromByteOffset: i &+ 2, as: UInt8.self)
                if third > 1 {
                    i &+= 3
                } else if base.load(fromByteOffset: i &+ 1, as: UInt8.self) != 0 {
                    i &+= 2
                } else if third == 1 && base.load(fromByteOffset: i, as: UInt8.self) == 0 {
                    return i
                } else {
                    i &+= 1
                }
            }
        }
        return nil
    }

    /// The start code's first byte for a `00 00 01` at `prefix`: one earlier when a zero byte
    /// at or after `lowerBound` precedes it.
    @inline(__always)
    package static func startCodeOffset(ofPrefixAt prefix: Int, in buffer: UnsafeRawBufferPointer, lowerBound: Int) -> Int {
        prefix > lowerBound && buffer[prefix - 1] == 0 ? prefix - 1 : prefix
    }

    /// `end` moved back over zero bytes, but not below `start`.
    @inline(__always)
    package static func trimmedEnd(in buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        var end = end
        while end > start && buffer[end - 1] == 0 { end -= 1 }
        return end
    }
}
