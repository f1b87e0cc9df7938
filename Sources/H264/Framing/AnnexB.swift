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
///   were); ``nalUnits(validating:)`` throws ``H264Error/Code/missingStartCode`` when any of
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
    /// Runs in time linear in the buffer, scanning 16 bytes at a time for zero bytes and
    /// looking at single bytes only near them. One allocation: the result array.
    ///
    /// - Parameter buffer: The whole stream (or any whole number of NAL units with their start codes).
    /// - Returns: The NAL units in order; empty when there is no start code.
    public static func nalUnits(in buffer: UnsafeRawBufferPointer) -> [NALUnitLocation] {
        var result: [NALUnitLocation] = []
        guard var prefix = findStartCodePrefix(in: buffer, from: 0) else { return result }
        var startCodeOffset = startCodeOffset(ofPrefixAt: prefix, in: buffer, lowerBound: 0)
        while true {
            let payloadStart = prefix + 3
            let next = findStartCodePrefix(in: buffer, from: payloadStart)
            let end = trimmedEnd(in: buffer, from: payloadStart, to: next ?? buffer.count)
            if end > payloadStart {
                result.append(NALUnitLocation(startCodeOffset: startCodeOffset, range: payloadStart..<end))
            }
            guard let next else { return result }
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
    /// - Throws: ``H264Error/Code/missingStartCode`` (with the offset of the first offending
    ///   byte) when a non-zero byte comes before the first start code (so also when input with
    ///   a non-zero byte holds no start code at all).
    public static func nalUnits(validating bytes: [UInt8]) throws(H264Error) -> [NALUnitLocation] {
        let units = nalUnits(in: bytes)
        // Without units there may still be a start code (one at the very end, or only empty
        // units): what precedes it is the leading part.
        let leading = units.first?.startCodeOffset ?? firstStartCode(in: bytes) ?? bytes.count
        if let bad = bytes[0..<leading].firstIndex(where: { $0 != 0 }) {
            throw H264Error(.missingStartCode, field: "start_code_prefix_one_3bytes", byteOffset: bad,
                            "\(leading) byte(s) before the first start code, not all zero")
        }
        return units
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
    /// Sixteen bytes are tested at a time, as two 64-bit words, for a pair of adjacent zero
    /// bytes: `p = x | x >> 8` has a zero byte where `x` has a zero pair, and the word trick
    /// `(p - 0x0101…) & ~p & 0x8080…` is non-zero exactly when `p` has a zero byte. Only a block
    /// that may hold a zero pair is looked at byte by byte, with the skip rules of a three-byte
    /// pattern (a byte > 1 at `j + 2` rules out `j`, `j + 1` and `j + 2`). Pairs are rarer than
    /// single zeros in entropy-coded data, which made this about 1.5× faster than testing for
    /// single zero bytes on the conformance streams.
    @inline(__always)
    static func findStartCodePrefix(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = buffer.count
        guard count >= 3, let base = buffer.baseAddress else { return nil }
        let last = count - 3 // the last offset at which a 00 00 01 can begin
        var i = max(start, 0)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i <= last {
            var blockEnd = last + 1
            if i + 16 <= count {
                // Byte k of `w | w >> 8` (little-endian) is zero exactly when bytes k and k + 1
                // are both zero; byte 7 is byte 7 alone, its partner being in the next word.
                let a = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let b = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self))
                let pairsA = a | (a >> 8)
                let pairsB = b | (b >> 8)
                let zeros = ((pairsA &- ones) & ~pairsA & highs) | ((pairsB &- ones) & ~pairsB & highs)
                if zeros == 0 {
                    // No two adjacent zero bytes begin in i..<i+16: no start code begins there.
                    i += 16
                    continue
                }
                blockEnd = min(i + 16, last + 1)
            }
            // Byte-wise inside the block (or the tail), with skips.
            while i < blockEnd {
                let third = base.load(fromByteOffset: i + 2, as: UInt8.self)
                if third > 1 {
                    i += 3
                } else if base.load(fromByteOffset: i + 1, as: UInt8.self) != 0 {
                    i += 2
                } else if third == 1 && base.load(fromByteOffset: i, as: UInt8.self) == 0 {
                    return i
                } else {
                    i += 1
                }
            }
        }
        return nil
    }

    /// The start code's first byte for a `00 00 01` at `prefix`: one earlier when a zero byte
    /// at or after `lowerBound` precedes it.
    @inline(__always)
    static func startCodeOffset(ofPrefixAt prefix: Int, in buffer: UnsafeRawBufferPointer, lowerBound: Int) -> Int {
        prefix > lowerBound && buffer[prefix - 1] == 0 ? prefix - 1 : prefix
    }

    /// `end` moved back over zero bytes, but not below `start`.
    @inline(__always)
    static func trimmedEnd(in buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        var end = end
        while end > start && buffer[end - 1] == 0 { end -= 1 }
        return end
    }
}
