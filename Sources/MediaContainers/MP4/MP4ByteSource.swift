public import MediaCore

/// Where an ``MP4Reader`` reads a file's bytes: the reader reads the box headers, the `moov` and
/// each `moof` into memory, and each sample's bytes at its offset when the frame is asked for,
/// so a large file is never read whole. ``MP4MemorySource`` holds the bytes in memory (tests, fuzzing,
/// a file already read); ``MP4FileSource`` reads a file with `pread`.
public protocol MP4ByteSource: Sendable {
    /// The size of the file in bytes.
    var count: Int { get }
    /// `count` bytes at file offset `offset`; the caller keeps `offset + count` within ``count``.
    ///
    /// - Throws: a `MediaError` when the bytes cannot be read.
    func read(at offset: Int, count: Int) throws(MediaError) -> ArraySlice<UInt8>
}

/// A whole file's bytes in memory, as an ``MP4ByteSource``.
public struct MP4MemorySource: MP4ByteSource {
    /// The file's bytes.
    public var bytes: [UInt8]

    /// A source of `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The number of bytes.
    public var count: Int { bytes.count }

    /// The bytes at `offset` (no copy).
    ///
    /// - Throws: `truncated` when the range passes the end.
    public func read(at offset: Int, count: Int) throws(MediaError) -> ArraySlice<UInt8> {
        guard offset >= 0, count >= 0, offset <= bytes.count, count <= bytes.count - offset else {
            throw MediaError(.truncated, field: "sample", byteOffset: offset, "\(count) byte(s) at \(offset), the file has \(bytes.count)")
        }
        return bytes[offset..<offset + count]
    }
}
