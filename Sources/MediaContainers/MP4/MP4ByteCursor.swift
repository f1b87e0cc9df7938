import MediaCore

/// A bounded big-endian reader over one box's bytes (ISO/IEC 14496-12 reads every field
/// big-endian): every read names its field and fails with `MediaError.Code.truncated`, at the
/// field's offset in the file, when the bytes are not there. `read*` consumes.
struct MP4ByteCursor {
    /// The bytes (a box's, or a whole small file's).
    let bytes: ArraySlice<UInt8>
    /// The offset in the file of `bytes.startIndex`'s byte minus `bytes.startIndex`: a slice index
    /// plus `base` is a file offset.
    let base: Int
    /// The index of the next byte to read.
    private(set) var position: Int

    /// A cursor at the start of `bytes`, which begin at file offset `fileOffset`.
    init(_ bytes: ArraySlice<UInt8>, fileOffset: Int) {
        self.bytes = bytes
        base = fileOffset - bytes.startIndex
        position = bytes.startIndex
    }

    /// Bytes left.
    var remaining: Int { bytes.endIndex - position }
    /// The file offset of the next byte.
    var fileOffset: Int { base + position }

    /// Fails unless `count` bytes remain.
    func require(_ count: Int, _ field: String) throws(MediaError) {
        guard count >= 0, count <= remaining else {
            throw MediaError(.truncated, field: field, byteOffset: fileOffset,
                             "\(field) needs \(count) byte(s), \(remaining) left in the box")
        }
    }

    /// Reads an unsigned big-endian value of `count` (≤ 8) bytes.
    mutating func readUInt(_ count: Int, _ field: String) throws(MediaError) -> UInt64 {
        try require(count, field)
        var value: UInt64 = 0
        for index in position..<position + count { value = value << 8 | UInt64(bytes[index]) }
        position += count
        return value
    }

    /// Reads an 8-bit value.
    mutating func readUInt8(_ field: String) throws(MediaError) -> UInt8 { UInt8(try readUInt(1, field)) }
    /// Reads a 16-bit value.
    mutating func readUInt16(_ field: String) throws(MediaError) -> Int { Int(try readUInt(2, field)) }
    /// Reads a 32-bit value.
    mutating func readUInt32(_ field: String) throws(MediaError) -> UInt32 { UInt32(try readUInt(4, field)) }
    /// Reads a 64-bit value.
    mutating func readUInt64(_ field: String) throws(MediaError) -> UInt64 { try readUInt(8, field) }
    /// Reads a 32-bit two's complement value.
    mutating func readInt32(_ field: String) throws(MediaError) -> Int32 { Int32(bitPattern: try readUInt32(field)) }

    /// Reads `count` bytes.
    mutating func readBytes(_ count: Int, _ field: String) throws(MediaError) -> ArraySlice<UInt8> {
        try require(count, field)
        defer { position += count }
        return bytes[position..<position + count]
    }

    /// Skips `count` bytes.
    mutating func skip(_ count: Int, _ field: String) throws(MediaError) {
        try require(count, field)
        position += count
    }

    /// Reads a FullBox's `version` (8 bits) and `flags` (24 bits) (ISO/IEC 14496-12 §4.2).
    mutating func readVersionAndFlags(_ box: MP4BoxType) throws(MediaError) -> (version: UInt8, flags: UInt32) {
        let word = try readUInt32("\(box).version")
        return (UInt8(word >> 24), word & 0xFF_FFFF)
    }

    /// The rest of the bytes.
    mutating func readRest() -> ArraySlice<UInt8> {
        defer { position = bytes.endIndex }
        return bytes[position...]
    }
}
