/// A box's type (ISO/IEC 14496-12 §4.2 `BoxHeader.type`): four characters, such as `moov` or
/// `avc1`, held as their 32-bit big-endian value.
public struct MP4BoxType: Hashable, Sendable, RawRepresentable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The four characters as one big-endian 32-bit value (`moov` = 0x6D6F_6F76).
    public var rawValue: UInt32

    /// Creates a type from its 32-bit value.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Creates a type from four ASCII characters; any other length or non-ASCII text traps, so
    /// use it for constants only.
    public init(stringLiteral value: String) {
        let bytes = Array(value.utf8)
        precondition(bytes.count == 4, "a box type is four characters: \(value)")
        self.init(bytes: bytes)
    }

    /// Creates a type from four bytes as they appear in a file.
    public init(bytes: some Collection<UInt8>) {
        rawValue = bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The four bytes as written in a file.
    public var bytes: [UInt8] {
        [UInt8(rawValue >> 24), UInt8(truncatingIfNeeded: rawValue >> 16), UInt8(truncatingIfNeeded: rawValue >> 8),
         UInt8(truncatingIfNeeded: rawValue)]
    }

    /// The four characters (a byte outside printable ASCII as `.`), e.g. `moov`.
    public var description: String {
        String(decoding: bytes.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
    }
}
