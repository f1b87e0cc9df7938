public import MediaCore
/// The FLV file header (Adobe FLV and F4V File Format Specification 10.1, annex E.2): the
/// signature `FLV`, a version, which kinds of tags follow, and where the tags begin.
public struct FLVFileHeader: Hashable, Sendable {
    /// The size of the header as version 1 defines it, and the smallest `DataOffset` allowed.
    public static let size = 9

    /// `Version`: 1.
    public var version: UInt8
    /// `TypeFlagsAudio`: audio tags are present.
    public var hasAudio: Bool
    /// `TypeFlagsVideo`: video tags are present.
    public var hasVideo: Bool
    /// `DataOffset`: the size of the header, where `PreviousTagSize0` begins (9 for version 1).
    public var dataOffset: Int

    /// Creates a header.
    public init(version: UInt8 = 1, hasAudio: Bool = false, hasVideo: Bool = true, dataOffset: Int = FLVFileHeader.size) {
        self.version = version
        self.hasAudio = hasAudio
        self.hasVideo = hasVideo
        self.dataOffset = dataOffset
    }

    /// Parses the header at the start of `bytes`.
    ///
    /// Like FFmpeg, the type flags and the version are taken as they are (players ignore them).
    ///
    /// - Throws: `MediaError.Code.invalidFLVHeader` when the data does not begin with `FLV`
    ///   (field `Signature`) or `DataOffset` is below 9; `MediaError.Code.truncated` when the
    ///   header or the `DataOffset` it names is cut short. All fatal: no tag can be found.
    public init(parsing bytes: some RandomAccessCollection<UInt8>) throws(MediaError) {
        let start = bytes.startIndex
        let signature: [UInt8] = [0x46, 0x4C, 0x56]
        guard bytes.prefix(3).elementsEqual(signature.prefix(bytes.count)) else {
            throw MediaError(.invalidFLVHeader, field: "Signature", byteOffset: 0, "the data does not begin with 'FLV'")
        }
        guard bytes.count >= Self.size else {
            throw MediaError(.truncated, field: "DataOffset", byteOffset: 0, "an FLV header of \(bytes.count) byte(s); 9 needed")
        }
        version = bytes[bytes.index(start, offsetBy: 3)]
        let flags = bytes[bytes.index(start, offsetBy: 4)]
        hasAudio = flags & 0x04 != 0
        hasVideo = flags & 0x01 != 0
        dataOffset = BigEndian.read(bytes, at: bytes.index(start, offsetBy: 5), count: 4)
        guard dataOffset >= Self.size else {
            throw MediaError(.invalidFLVHeader, field: "DataOffset", byteOffset: 5, "DataOffset \(dataOffset) is below 9")
        }
        guard dataOffset <= bytes.count else {
            throw MediaError(.truncated, field: "DataOffset", byteOffset: 5,
                            "DataOffset \(dataOffset) lies past the end (\(bytes.count) bytes)")
        }
    }

    /// Appends the header (and, past its 9 bytes, zero bytes up to ``dataOffset``).
    public func append(to output: inout [UInt8]) {
        output.append(contentsOf: [0x46, 0x4C, 0x56, version, (hasAudio ? 0x04 : 0) | (hasVideo ? 0x01 : 0)])
        let offset = Swift.max(dataOffset, Self.size)
        BigEndian.append(offset, count: 4, to: &output)
        output.append(contentsOf: repeatElement(0, count: offset - Self.size))
    }
}
