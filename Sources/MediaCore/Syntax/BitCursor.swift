/// Reads bits and Exp-Golomb codes (clause 9.1) from RBSP bytes it does not own, most
/// significant bit first: the one implementation of these reads.
///
/// ``BitReader`` reads through it over its own array. The slice-header reader of every received
/// picture (`SliceHeader.read(header:payload:parameterSets:)`) reads through it over bytes on
/// the stack, so that deciding where an access unit ends allocates nothing.
///
/// Every read names the syntax element it reads, so that a failure says which element, at which
/// bit; a failed read leaves ``bitOffset`` where it was. Reads away from the end load 64 bits
/// at once; the last bytes are read a byte at a time.
package struct BitCursor {
    /// The RBSP bytes being read; valid while the cursor is used.
    package let bytes: UnsafeBufferPointer<UInt8>
    /// The position of the next bit to read, counted from the first bit of ``bytes``.
    package private(set) var bitOffset: Int
    /// Tolerable problems met so far (see ``BitReader/diagnostics``).
    package var diagnostics: [MediaError] = []

    /// Creates a cursor over `bytes`, at bit `bitOffset` (0…`bytes.count * 8`).
    package init(_ bytes: UnsafeBufferPointer<UInt8>, bitOffset: Int = 0) {
        self.bytes = bytes
        self.bitOffset = bitOffset
    }

    /// Bits left to read.
    package var bitsRemaining: Int { bytes.count &* 8 &- bitOffset }

    private func error(_ code: MediaError.Code, _ name: () -> String, at bit: Int, _ message: String) -> MediaError {
        MediaError(code, field: name(), bitOffset: bit, message)
    }

    /// The 64 bits from ``bitOffset`` on, first unread bit at the top, when at least 8 bytes
    /// remain from the byte it is in (at least 57 of them are then bits of ``bytes``; the ones
    /// below are zero); nil nearer the end.
    @inline(__always)
    private func window() -> UInt64? {
        let byte = bitOffset >> 3
        guard bytes.count &- byte >= 8, let base = bytes.baseAddress else { return nil }
        return UInt64(bigEndian: UnsafeRawPointer(base + byte).loadUnaligned(as: UInt64.self)) << UInt64(bitOffset & 7)
    }

    /// Reads `count` bits (0…64) as an unsigned value.
    @inline(__always)
    package mutating func rawBits(_ count: Int, _ name: () -> String) throws(MediaError) -> UInt64 {
        // Most reads: one load.
        if count > 0, count <= 57, let window = window() {
            bitOffset &+= count
            return window >> UInt64(64 - count)
        }
        return try rawBitsNearTheEnd(count, name)
    }

    @inline(never)
    private mutating func rawBitsNearTheEnd(_ count: Int, _ name: () -> String) throws(MediaError) -> UInt64 {
        precondition(count >= 0 && count <= 64)
        guard count <= bitsRemaining else {
            throw error(.truncated, name, at: bitOffset, "needs \(count) bits, \(bitsRemaining) left")
        }
        var value: UInt64 = 0
        var remaining = count
        var offset = bitOffset
        while remaining > 0 {
            let bitInByte = offset & 7
            let take = Swift.min(8 - bitInByte, remaining)
            // The byte's unread bits at the top, then the `take` wanted ones at the bottom.
            let byte = UInt64(bytes[offset >> 3] << UInt8(bitInByte))
            value = (value << UInt64(take)) | (byte >> UInt64(8 - take))
            remaining -= take
            offset += take
        }
        bitOffset = offset
        return value
    }

    /// Reads an unsigned Exp-Golomb code, `ue(v)`, without a range check.
    ///
    /// - Throws: ``MediaError/Code/expGolombOverflow`` for 32 or more leading zero bits,
    ///   ``MediaError/Code/truncated`` when the data ends first.
    @inline(__always)
    package mutating func rawUE(_ name: () -> String) throws(MediaError) -> Int {
        // Most codes: one load. A code of `n` leading zeros is 2n + 1 bits, the number after
        // the zeros minus one.
        if let window = window(), window.leadingZeroBitCount <= 28 {
            let length = 2 &* window.leadingZeroBitCount &+ 1
            bitOffset &+= length
            return Int(window >> UInt64(64 - length)) &- 1
        }
        return try rawUEByteByByte(name)
    }

    /// ``rawUE(_:)`` for long codes and codes near the end.
    @inline(never)
    private mutating func rawUEByteByByte(_ name: () -> String) throws(MediaError) -> Int {
        let start = bitOffset
        let end = bytes.count &* 8
        var offset = start
        var leadingZeros = 0
        // A byte at a time: the unread bits of the byte at the top, so that its leading zero
        // bits are the code's, up to its first 1 bit.
        while true {
            guard offset < end else {
                throw error(.truncated, name, at: start, "Exp-Golomb code runs past the end")
            }
            let bitInByte = offset & 7
            let byte = bytes[offset >> 3] << UInt8(bitInByte)
            if byte == 0 {
                leadingZeros += 8 - bitInByte
                offset += 8 - bitInByte
            } else {
                leadingZeros += byte.leadingZeroBitCount
                offset += byte.leadingZeroBitCount + 1
            }
            if leadingZeros >= 32 {
                throw error(.expGolombOverflow, name, at: start, "Exp-Golomb code with 32 or more leading zero bits")
            }
            if byte != 0 { break }
        }
        bitOffset = offset
        if leadingZeros == 0 { return 0 }
        do {
            return (1 << leadingZeros) - 1 + Int(try rawBits(leadingZeros, name))
        } catch {
            bitOffset = start
            throw error
        }
    }

    /// Reads `count` bits (0…32) as an unsigned value: `u(n)`.
    @inline(__always)
    package mutating func readBits(_ count: Int, _ name: @autoclosure () -> String) throws(MediaError) -> Int {
        Int(try rawBits(count, name))
    }

    /// Reads one bit as a flag: `u(1)`.
    @inline(__always)
    package mutating func readFlag(_ name: @autoclosure () -> String) throws(MediaError) -> Bool {
        try rawBits(1, name) == 1
    }

    /// Reads an unsigned Exp-Golomb code, `ue(v)`, and checks it against `range`.
    ///
    /// - Throws: as ``rawUE(_:)``, and ``MediaError/Code/valueOutOfRange`` when the value is
    ///   outside `range`.
    package mutating func readUE(_ name: @autoclosure () -> String, range: ClosedRange<Int>) throws(MediaError) -> Int {
        let start = bitOffset
        let value = try rawUE(name)
        guard range.contains(value) else { throw outOfRange(value, range, name, at: start) }
        return value
    }

    /// Reads an unsigned Exp-Golomb code no larger than `max` (as ``readUE(_:range:)`` with
    /// `0...max`).
    @inline(__always)
    package mutating func readUE(_ name: @autoclosure () -> String, max: Int) throws(MediaError) -> Int {
        let start = bitOffset
        let value = try rawUE(name)
        guard value <= max else { throw outOfRange(value, 0...max, name, at: start) }
        return value
    }

    /// The error of a value outside `range` read from bit `start`, which the cursor goes back to.
    @inline(never)
    private mutating func outOfRange(_ value: Int, _ range: ClosedRange<Int>, _ name: () -> String, at start: Int) -> MediaError {
        bitOffset = start
        return error(.valueOutOfRange, name, at: start, "\(value) is outside \(range.lowerBound)...\(range.upperBound)")
    }

    /// Reads an unsigned Exp-Golomb code whose range is tolerable: a value outside `range` is kept
    /// and recorded in ``diagnostics`` (see ``BitReader/readUE(_:tolerating:)``).
    package mutating func readUE(_ name: @autoclosure () -> String, tolerating range: ClosedRange<Int>) throws(MediaError) -> Int {
        let start = bitOffset
        let value = try rawUE(name)
        if !range.contains(value) {
            diagnostics.append(error(.valueOutOfRange, name, at: start, "\(value) is outside \(range.lowerBound)...\(range.upperBound) (kept)"))
        }
        return value
    }

    /// Reads a signed Exp-Golomb code, `se(v)`, and checks it against `range`.
    package mutating func readSE(_ name: @autoclosure () -> String,
                         range: ClosedRange<Int> = Int(Int32.min) + 1...Int(Int32.max)) throws(MediaError) -> Int {
        let start = bitOffset
        let codeNum = try rawUE(name)
        let value = codeNum & 1 == 1 ? (codeNum + 1) / 2 : -(codeNum / 2)
        guard range.contains(value) else { throw outOfRange(value, range, name, at: start) }
        return value
    }

    /// Skips `count` bits.
    package mutating func skipBits(_ count: Int, _ name: @autoclosure () -> String) throws(MediaError) {
        guard count >= 0, count <= bitsRemaining else {
            throw error(.truncated, name, at: bitOffset, "cannot skip \(count) bits, \(bitsRemaining) left")
        }
        bitOffset += count
    }
}
