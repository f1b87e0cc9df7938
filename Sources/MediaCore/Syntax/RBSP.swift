/// Raw byte sequence payloads: emulation prevention removed and inserted (clause 7.4.1).
///
/// Inside a NAL unit, every `0x00 0x00` followed by a byte ≤ `0x03` is written as
/// `0x00 0x00 0x03 xx`; the `0x03` is an `emulation_prevention_three_byte`.
public enum RBSP {
    /// Removes emulation prevention bytes.
    ///
    /// - Parameters:
    ///   - bytes: NAL unit bytes (header included or not).
    ///   - limit: stop after producing this many RBSP bytes (`nil`: all). Parsers that need only
    ///     a header (slice headers) decode a prefix.
    /// - Returns: the RBSP bytes.
    public static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes, limit: Int? = nil) -> [UInt8] {
        if let decoded = bytes.withContiguousStorageIfAvailable({ decode(buffer: $0, limit: limit) }) { return decoded }
        return Array(bytes).withUnsafeBufferPointer { decode(buffer: $0, limit: limit) }
    }

    /// ``decode(_:limit:)`` over contiguous bytes: one allocation, written in place (the slice
    /// header of every received picture goes through here).
    package static func decode(buffer bytes: UnsafeBufferPointer<UInt8>, limit: Int?) -> [UInt8] {
        let cap = limit.map { Swift.max(0, Swift.min($0, bytes.count)) } ?? bytes.count
        // Not through `unsafeUninitializedCapacity` when empty: that writes the count into the
        // shared empty-array storage (a data race ThreadSanitizer reports).
        guard cap > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: cap) { out, count in
            count = decode(bytes, into: UnsafeMutableBufferPointer(rebasing: out[..<cap]))
        }
    }

    /// Removes emulation prevention bytes from `bytes` into `out`, as many RBSP bytes as `out`
    /// holds: the one decoding loop, which writes no heap memory of its own.
    ///
    /// - Returns: the number of RBSP bytes written.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let cap = Swift.min(out.count, bytes.count)
        guard cap > 0, let source = bytes.baseAddress, let destination = out.baseAddress else { return 0 }
        if !containsZeroPair(bytes, upTo: cap) {
            // No two zero bytes in a row, so no emulation prevention byte: one copy.
            destination.update(from: source, count: cap)
            return cap
        }
        var written = 0
        var index = 0
        var zeros = 0
        while written < out.count && index < bytes.count {
            let byte = bytes[index]
            index += 1
            if zeros >= 2 && byte == 0x03 {
                zeros = 0
                continue
            }
            out[written] = byte
            written += 1
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return written
    }

    /// True when two zero bytes in a row begin before `end` (an emulation prevention byte can
    /// only follow such a pair). Looks at every other byte: a pair always holds one at an odd
    /// index, and only a zero there needs its neighbours read.
    private static func containsZeroPair(_ bytes: UnsafeBufferPointer<UInt8>, upTo end: Int) -> Bool {
        var index = 1
        while index < end {
            if bytes[index] == 0 {
                if bytes[index - 1] == 0 || (index + 1 < bytes.count && bytes[index + 1] == 0) { return true }
            }
            index += 2
        }
        return false
    }

    /// Inserts emulation prevention bytes so that the result contains no start code prefix.
    ///
    /// A final `0x03` is appended when the payload ends in `0x00` (clause 7.4.1: the last byte
    /// of a NAL unit shall not be `0x00`); callers writing RBSP trailing bits never hit that.
    public static func encode<Bytes: Collection<UInt8>>(_ rbsp: Bytes) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rbsp.count + rbsp.count / 64 + 1)
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2 && byte <= 0x03 {
                out.append(0x03)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        if zeros > 0 { out.append(0x03) }
        return out
    }
}
