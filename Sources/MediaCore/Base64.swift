/// Base64 with the standard alphabet and `=` padding (RFC 4648 clause 4), as SDP's
/// `sprop-parameter-sets` uses it (RFC 6184 clause 8.1) — without a Foundation dependency.
public enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Encodes bytes, padded with `=` to a multiple of 4 characters.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next(), third = iterator.next()
            let value = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            output.append(second == nil ? UInt8(ascii: "=") : alphabet[Int(value >> 6 & 63)])
            output.append(third == nil ? UInt8(ascii: "=") : alphabet[Int(value & 63)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes text; padding is optional, whitespace is not allowed.
    ///
    /// - Throws: ``MediaError/Code/valueOutOfRange`` (field `base64`) for a character outside
    ///   the alphabet, padding before the end, or a length that leaves a single dangling
    ///   character; the byte offset is that of the character in `text`.
    public static func decode(_ text: some StringProtocol) throws(MediaError) -> [UInt8] {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var count = 0
        var padding = 0
        for (offset, character) in text.utf8.enumerated() {
            if character == UInt8(ascii: "=") {
                padding += 1
                guard padding <= 2 else {
                    throw MediaError(.valueOutOfRange, field: "base64", byteOffset: offset, "more than two padding characters")
                }
                continue
            }
            guard padding == 0, let value = value(of: character) else {
                throw MediaError(.valueOutOfRange, field: "base64", byteOffset: offset,
                                padding > 0 ? "data after padding" : "character \(character) is not base64")
            }
            accumulator = accumulator << 6 | UInt32(value)
            count += 1
            if count == 4 {
                output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                output.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator = 0
                count = 0
            }
        }
        switch count {
        case 0:
            break
        case 2:
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            throw MediaError(.valueOutOfRange, field: "base64", byteOffset: text.utf8.count, "a single character cannot end base64 data")
        }
        return output
    }

    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
