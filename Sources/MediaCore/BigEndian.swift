/// The big-endian reads and writes of the byte syntaxes (AVCC lengths, avcC, FLV UI8/UI24/UI32 and
/// SI24); callers check that the bytes are there.
package enum BigEndian {
    /// Reads `count` (≤ 4) bytes at `offset` as an unsigned big-endian number.
    @inline(__always)
    package static func read<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at offset: Bytes.Index, count: Int) -> Int {
        var value = 0
        var index = offset
        for _ in 0..<count {
            value = value << 8 | Int(bytes[index])
            index = bytes.index(after: index)
        }
        return value
    }

    /// Sign-extends a 24-bit two's complement value (SI24).
    @inline(__always)
    package static func signExtend24(_ value: Int) -> Int32 {
        Int32(truncatingIfNeeded: value << 8) >> 8
    }

    /// Appends the low `count` bytes of `value`, most significant first.
    @inline(__always)
    package static func append(_ value: Int, count: Int, to output: inout [UInt8]) {
        var shift = 8 * (count - 1)
        while shift >= 0 {
            output.append(UInt8(truncatingIfNeeded: value >> shift))
            shift -= 8
        }
    }

    /// Writes the low `count` bytes of `value`, most significant first, over the `count` bytes
    /// at `position` of `output`.
    @inline(__always)
    package static func write(_ value: Int, count: Int, to output: inout [UInt8], at position: Int) {
        var shift = 8 * (count - 1)
        var index = position
        while shift >= 0 {
            output[index] = UInt8(truncatingIfNeeded: value >> shift)
            shift -= 8
            index += 1
        }
    }
}
