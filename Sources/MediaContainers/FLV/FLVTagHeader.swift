public import MediaCore
/// The 11-byte header of an FLV tag (FLV specification annex E.4.1): what the tag holds, how long
/// its data is and when it applies. Each tag is followed by `PreviousTagSize` (UI32) = 11 + the
/// data size.
public struct FLVTagHeader: Hashable, Sendable {
    /// The size of the header in bytes.
    public static let size = 11
    /// The largest `DataSize` (UI24).
    public static let maximumDataSize = 0xFF_FFFF

    /// `TagType`: what the tag's data is.
    public struct TagType: RawRepresentable, Hashable, Sendable {
        /// The 5-bit `TagType` value.
        public var rawValue: UInt8
        /// Creates a tag type from its value.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// 8: AUDIODATA.
        public static let audio = TagType(rawValue: 8)
        /// 9: VIDEODATA.
        public static let video = TagType(rawValue: 9)
        /// 18: SCRIPTDATA (`onMetaData`).
        public static let scriptData = TagType(rawValue: 18)
        /// True for the three types the specification defines.
        public var isKnown: Bool { self == .audio || self == .video || self == .scriptData }
    }

    /// `TagType`.
    public var tagType: TagType
    /// `Filter`: the data is encrypted (not supported by this library's reader).
    public var filter: Bool
    /// `DataSize`: the number of data bytes after the header, at most ``maximumDataSize``.
    public var dataSize: Int
    /// `Timestamp` and `TimestampExtended` as one 32-bit number: the time in milliseconds the tag
    /// applies at (for video, the decoding time). Read unsigned, as FFmpeg reads it.
    public var timestamp: UInt32
    /// `StreamID`: always 0.
    public var streamId: Int

    /// Creates a header.
    public init(tagType: TagType, filter: Bool = false, dataSize: Int, timestamp: UInt32, streamId: Int = 0) {
        self.tagType = tagType
        self.filter = filter
        self.dataSize = dataSize
        self.timestamp = timestamp
        self.streamId = streamId
    }

    /// Parses the 11 bytes at the start of `bytes`.
    ///
    /// - Throws: `MediaError.Code.truncated` when fewer than 11 bytes are given;
    ///   `MediaError.Code.flvFramingLost` when the reserved bits are set, the tag type is not 8,
    ///   9 or 18, or the stream id is not 0 — the bytes are not a tag header, so the tag stream
    ///   cannot be followed.
    public init(parsing bytes: some RandomAccessCollection<UInt8>) throws(MediaError) {
        guard bytes.count >= Self.size else {
            throw MediaError(.truncated, field: "TagType", byteOffset: 0, "\(bytes.count) byte(s) left for an 11-byte tag header")
        }
        let start = bytes.startIndex
        func at(_ offset: Int, _ count: Int) -> Int { BigEndian.read(bytes, at: bytes.index(start, offsetBy: offset), count: count) }
        let first = UInt8(at(0, 1))
        tagType = TagType(rawValue: first & 0x1F)
        filter = first & 0x20 != 0
        guard first & 0xC0 == 0, tagType.isKnown else {
            throw MediaError(.flvFramingLost, field: "TagType", byteOffset: 0,
                            "byte 0x\(String(first, radix: 16)) is not an FLV tag type (8, 9 or 18)")
        }
        dataSize = at(1, 3)
        timestamp = UInt32(at(4, 3) | at(7, 1) << 24)
        streamId = at(8, 3)
        guard streamId == 0 else {
            throw MediaError(.flvFramingLost, field: "StreamID", byteOffset: 8, "StreamID \(streamId) is not 0")
        }
    }

    /// Appends the 11 header bytes.
    ///
    /// - Throws: `MediaError.Code.valueOutOfRange` when ``dataSize`` does not fit 24 bits or
    ///   ``streamId`` is not 0…0xFFFFFF.
    public func append(to output: inout [UInt8]) throws(MediaError) {
        guard (0...Self.maximumDataSize).contains(dataSize) else {
            throw MediaError(.valueOutOfRange, field: "DataSize", "\(dataSize) bytes of tag data do not fit 24 bits")
        }
        guard (0...0xFF_FFFF).contains(streamId) else {
            throw MediaError(.valueOutOfRange, field: "StreamID", "StreamID \(streamId) does not fit 24 bits")
        }
        output.append((filter ? 0x20 : 0) | (tagType.rawValue & 0x1F))
        BigEndian.append(dataSize, count: 3, to: &output)
        BigEndian.append(Int(timestamp & 0xFF_FFFF), count: 3, to: &output)
        output.append(UInt8(timestamp >> 24))
        BigEndian.append(streamId, count: 3, to: &output)
    }
}
