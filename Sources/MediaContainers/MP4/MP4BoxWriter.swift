/// Appends ISO BMFF boxes (ISO/IEC 14496-12 §4.2) to a byte buffer: each box's `size` is
/// patched once, when its body is written, and becomes a 64-bit `largesize` (`size` 1) when the
/// box passes 4 GiB − 1.
///
/// ```swift
/// var writer = MP4BoxWriter()
/// writer.box("moov") { moov in
///     moov.fullBox("mvhd", version: 0, flags: 0) { $0.append32(0) /* … */ }
/// }
/// ```
public struct MP4BoxWriter: Sendable {
    /// The bytes written.
    public private(set) var bytes: [UInt8] = []

    /// An empty buffer.
    public init() {}

    /// Appends one box of `type` whose body `body` writes, then patches its size.
    public mutating func box<Failure: Error>(_ type: MP4BoxType, _ body: (inout MP4BoxWriter) throws(Failure) -> Void) throws(Failure) {
        let start = bytes.count
        append32(0)
        append(type)
        try body(&self)
        let size = bytes.count - start
        if size <= Int(UInt32.max) {
            patch32(UInt32(size), at: start)
        } else {
            // size 1 and an 8-byte largesize after the type (§4.2).
            patch32(1, at: start)
            bytes.insert(contentsOf: Self.bigEndian(UInt64(size + 8), count: 8), at: start + 8)
        }
    }

    /// Appends one full box (§4.2 `FullBox`): the box header, `version` (8 bits) and `flags`
    /// (24 bits), then the body.
    public mutating func fullBox<Failure: Error>(_ type: MP4BoxType, version: UInt8, flags: UInt32,
                                                 _ body: (inout MP4BoxWriter) throws(Failure) -> Void) throws(Failure) {
        try box(type) { (box: inout MP4BoxWriter) throws(Failure) in
            box.append32(UInt32(version) << 24 | flags & 0xFF_FFFF)
            try body(&box)
        }
    }

    /// The header of a box of `type` whose body is `bodySize` bytes, written ahead of a body
    /// that is not in memory (an `mdat`): 8 bytes, or 16 with a `largesize` when the box passes
    /// 4 GiB − 1.
    public static func header(_ type: MP4BoxType, bodySize: UInt64) -> [UInt8] {
        if bodySize + 8 <= UInt64(UInt32.max) {
            return bigEndian(bodySize + 8, count: 4) + type.bytes
        }
        return bigEndian(1, count: 4) + type.bytes + bigEndian(bodySize + 16, count: 8)
    }

    /// Appends a box type's four characters.
    public mutating func append(_ type: MP4BoxType) { bytes += type.bytes }
    /// Appends bytes as they are.
    public mutating func append(_ data: some Sequence<UInt8>) { bytes.append(contentsOf: data) }
    /// Appends an 8-bit value.
    public mutating func append8(_ value: UInt8) { bytes.append(value) }
    /// Appends a 16-bit big-endian value.
    public mutating func append16(_ value: UInt16) { bytes += Self.bigEndian(UInt64(value), count: 2) }
    /// Appends a 24-bit big-endian value (the low 24 bits of `value`).
    public mutating func append24(_ value: UInt32) { bytes += Self.bigEndian(UInt64(value), count: 3) }
    /// Appends a 32-bit big-endian value.
    public mutating func append32(_ value: UInt32) { bytes += Self.bigEndian(UInt64(value), count: 4) }
    /// Appends a 64-bit big-endian value.
    public mutating func append64(_ value: UInt64) { bytes += Self.bigEndian(value, count: 8) }
    /// Appends `count` zero bytes.
    public mutating func appendZeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }

    /// Writes a 32-bit big-endian value over the four bytes at `offset`.
    mutating func patch32(_ value: UInt32, at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }

    /// The low `count` bytes of `value`, most significant first.
    static func bigEndian(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - $0))) }
    }
}
