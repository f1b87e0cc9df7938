public import MediaCore

/// A box's header (ISO/IEC 14496-12 §4.2 `Box`): its `size` (32 bits; 1 → a 64-bit
/// `largesize` follows the type; 0 → the box runs to the end of the file or of the box holding
/// it), its `type`, and for `uuid` boxes the 16-byte `usertype`.
public struct MP4BoxHeader: Hashable, Sendable {
    /// The box's type.
    public var type: MP4BoxType
    /// The file offset of the box's first byte (its `size` field).
    public var offset: Int
    /// The whole box's size, header included (`size`, `largesize`, or for `size` 0 what remains
    /// of the container).
    public var size: Int
    /// The header's length: 8, 16 with a `largesize`, 16 more with a `usertype`.
    public var headerLength: Int
    /// A `uuid` box's `usertype`; nil for every other type.
    public var userType: [UInt8]?

    /// The file offset of the first byte after the header.
    public var payloadOffset: Int { offset + headerLength }
    /// The file offset just past the box.
    public var end: Int { offset + size }
    /// The payload's length.
    public var payloadSize: Int { size - headerLength }

    /// A header of its parts.
    public init(type: MP4BoxType, offset: Int, size: Int, headerLength: Int, userType: [UInt8]? = nil) {
        self.type = type
        self.offset = offset
        self.size = size
        self.headerLength = headerLength
        self.userType = userType
    }

    /// The type of a `uuid` box (ISO/IEC 14496-12 §4.2).
    public static let uuid: MP4BoxType = "uuid"
    /// The most header bytes a box can have: 8 + 8 (`largesize`) + 16 (`usertype`).
    public static let maximumLength = 32

    /// Reads the header of the box at file offset `offset` from `bytes`, its first bytes (at
    /// least 8 unless the container ends sooner, ``maximumLength`` suffices).
    ///
    /// - Parameters:
    ///   - bytes: the bytes from the box's first byte on (more may follow; they are not read).
    ///   - offset: the box's file offset.
    ///   - containerEnd: the file offset where the container holding the box ends (the file's
    ///     size for a top-level box): `size` 0 reaches it, and no box may pass it.
    /// - Throws: `truncated` (field `size`, `largesize`, `usertype`) when the container ends
    ///   inside the header; `mp4BoxSizeInvalid` (field: the box type) when the size is smaller
    ///   than the header or the box runs past `containerEnd`.
    public init(parsing bytes: some Collection<UInt8>, at offset: Int, containerEnd: Int) throws(MediaError) {
        let available = Swift.min(bytes.count, containerEnd - offset)
        let head = Array(bytes.prefix(Swift.max(0, Swift.min(available, Self.maximumLength))))
        guard head.count >= 8 else {
            throw MediaError(.truncated, field: "size", byteOffset: offset,
                             "a box header needs 8 bytes, \(Swift.max(0, containerEnd - offset)) left in its container")
        }
        var cursor = MP4ByteCursor(head[...], fileOffset: offset)
        let size32 = try cursor.readUInt32("size")
        let type = MP4BoxType(bytes: try cursor.readBytes(4, "type"))
        var size: Int
        switch size32 {
        case 1:
            let large = try cursor.readUInt64("largesize")
            guard large <= UInt64(Int.max) else {
                throw MediaError(.mp4BoxSizeInvalid, field: type.description, byteOffset: offset,
                                 "box '\(type)' has largesize \(large)")
            }
            size = Int(large)
        case 0: size = containerEnd - offset
        default: size = Int(size32)
        }
        var userType: [UInt8]?
        if type == Self.uuid { userType = Array(try cursor.readBytes(16, "usertype")) }
        let headerLength = cursor.fileOffset - offset
        guard size >= headerLength else {
            throw MediaError(.mp4BoxSizeInvalid, field: type.description, byteOffset: offset,
                             "box '\(type)' has size \(size), smaller than its \(headerLength)-byte header")
        }
        guard size <= containerEnd - offset else {
            throw MediaError(.mp4BoxSizeInvalid, field: type.description, byteOffset: offset,
                             "box '\(type)' of \(size) bytes runs past its container, \(containerEnd - offset) bytes left")
        }
        self.init(type: type, offset: offset, size: size, headerLength: headerLength, userType: userType)
    }
}

/// One box read whole into memory: its header and its payload, the bytes after the header.
public struct MP4Box: Hashable, Sendable {
    /// The header.
    public var header: MP4BoxHeader
    /// The payload (for a container box, its children).
    public var payload: ArraySlice<UInt8>

    /// The box's type.
    public var type: MP4BoxType { header.type }

    /// A box of its header and payload bytes (`payload.count` == `header.payloadSize`).
    public init(header: MP4BoxHeader, payload: ArraySlice<UInt8>) {
        self.header = header
        self.payload = payload
    }

    /// The boxes in `bytes`, one after another: the children of a container whose payload is
    /// `bytes` and begins at file offset `fileOffset`. Trailing zero bytes fewer than a header
    /// (padding some muxers leave) end the list without an error.
    ///
    /// - Throws: the errors of ``MP4BoxHeader/init(parsing:at:containerEnd:)``.
    public static func boxes(in bytes: ArraySlice<UInt8>, fileOffset: Int) throws(MediaError) -> [MP4Box] {
        var result: [MP4Box] = []
        var index = bytes.startIndex
        let end = fileOffset + bytes.count
        while index < bytes.endIndex {
            let offset = fileOffset + (index - bytes.startIndex)
            if bytes.endIndex - index < 8 && bytes[index...].allSatisfy({ $0 == 0 }) { break }
            let header = try MP4BoxHeader(parsing: bytes[index...], at: offset, containerEnd: end)
            let payloadStart = index + header.headerLength
            result.append(MP4Box(header: header, payload: bytes[payloadStart..<index + header.size]))
            index += header.size
        }
        return result
    }

    /// This box's children (its payload read as boxes, after `skipping` bytes of fields that
    /// come first, as `stsd`'s entry count or a sample entry's fixed fields).
    ///
    /// - Throws: the errors of ``boxes(in:fileOffset:)``; `truncated` when the payload is
    ///   shorter than `skipping`.
    public func children(skipping: Int = 0) throws(MediaError) -> [MP4Box] {
        guard skipping <= payload.count else {
            throw MediaError(.truncated, field: type.description, byteOffset: header.payloadOffset,
                             "box '\(type)' has \(payload.count) payload bytes, its fields need \(skipping)")
        }
        return try Self.boxes(in: payload.dropFirst(skipping), fileOffset: header.payloadOffset + skipping)
    }

    /// The first child of type `type`, nil when there is none.
    public func child(_ type: MP4BoxType) throws(MediaError) -> MP4Box? {
        try children().first { $0.type == type }
    }

    /// A cursor at the start of the payload.
    var cursor: MP4ByteCursor { MP4ByteCursor(payload, fileOffset: header.payloadOffset) }
}
