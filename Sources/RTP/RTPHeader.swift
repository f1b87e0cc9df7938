public import MediaCore
/// The fixed RTP header and what follows it up to the payload (RFC 3550 clause 5.1): version,
/// padding, extension, CSRC list, marker, payload type, sequence number, timestamp and SSRC.
///
/// ``parse(_:)-(UnsafeRawBufferPointer)`` reads the 12 fixed bytes, skips the CSRC list and a header extension, and
/// removes padding, returning where the payload lies; ``write(to:)`` writes the 12 fixed bytes
/// (no CSRCs, no extension, no padding: what ``RTPPacketizer`` sends).
public struct RTPHeader: Hashable, Sendable {
    /// The size of the fixed header in bytes.
    public static let fixedSize = 12

    /// `M`: set on the last packet of an access unit (RFC 6184 clause 5.1).
    public var marker: Bool
    /// `PT`, 0…127: the dynamic payload type the SDP maps to `H264/90000` (usually 96).
    public var payloadType: UInt8
    /// `sequence number`: increases by one per packet, wrapping at 65536.
    public var sequenceNumber: UInt16
    /// `timestamp`: the 90 kHz sampling instant of the access unit.
    public var timestamp: UInt32
    /// `SSRC`: identifies the sender's stream.
    public var ssrc: UInt32
    /// `CC`: how many CSRC identifiers followed the fixed header (they are skipped, not kept, so
    /// that a header stays a plain value); ``write(to:)`` writes none.
    public var csrcCount: Int
    /// `X`: a header extension was present (it is skipped, not kept).
    public var hadExtension: Bool
    /// Padding bytes that followed the payload (`P`), removed from it.
    public var paddingCount: Int

    /// Creates a header for sending (no CSRCs, no extension, no padding).
    public init(marker: Bool, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32) {
        self.marker = marker
        self.payloadType = payloadType & 0x7F
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcCount = 0
        self.hadExtension = false
        self.paddingCount = 0
    }

    /// Parses an RTP packet's header, skipping its CSRC list and header extension and removing
    /// its padding.
    ///
    /// - Returns: the header and the range of the payload in `packet`.
    /// - Throws: `MediaError.Code.truncated` when the packet is shorter than its header, CSRC
    ///   list or extension say (field `rtp_header`, `CSRC`, `header_extension`);
    ///   `MediaError.Code.valueOutOfRange` for a version other than 2 (field `V`) or a padding
    ///   count larger than the payload (field `P`).
    public static func parse(_ packet: UnsafeRawBufferPointer) throws(MediaError) -> (header: RTPHeader, payload: Range<Int>) {
        try parseInline(packet)
    }

    /// ``parse(_:)-(UnsafeRawBufferPointer)``, inlined into the receivers that call it for
    /// every packet (``RTPDepacketizer``): the header comes back in registers, not through
    /// memory.
    @inline(__always)
    package static func parseInline(_ packet: UnsafeRawBufferPointer) throws(MediaError) -> (header: RTPHeader, payload: Range<Int>) {
        guard packet.count >= fixedSize else {
            throw MediaError(.truncated, field: "rtp_header", byteOffset: 0, "\(packet.count) bytes, an RTP header needs 12")
        }
        let first = packet[0]
        guard first >> 6 == 2 else {
            throw MediaError(.valueOutOfRange, field: "V", byteOffset: 0, "RTP version \(first >> 6), expected 2")
        }
        let csrcCount = Int(first & 0x0F)
        var header = RTPHeader(marker: packet[1] & 0x80 != 0, payloadType: packet[1] & 0x7F,
                               sequenceNumber: UInt16(packet[2]) << 8 | UInt16(packet[3]),
                               timestamp: readUInt32(packet, at: 4), ssrc: readUInt32(packet, at: 8))
        var position = fixedSize
        guard packet.count - position >= 4 * csrcCount else {
            throw MediaError(.truncated, field: "CSRC", byteOffset: position, "\(csrcCount) CSRCs do not fit the packet")
        }
        header.csrcCount = csrcCount
        position += 4 * csrcCount
        if first & 0x10 != 0 {
            header.hadExtension = true
            guard packet.count - position >= 4 else {
                throw MediaError(.truncated, field: "header_extension", byteOffset: position, "no room for the extension header")
            }
            let words = Int(packet[position + 2]) << 8 | Int(packet[position + 3])
            guard packet.count - position - 4 >= 4 * words else {
                throw MediaError(.truncated, field: "header_extension", byteOffset: position, "extension of \(words) words runs past the packet")
            }
            position += 4 + 4 * words
        }
        var end = packet.count
        if first & 0x20 != 0 {
            let padding = Int(packet[packet.count - 1])
            guard padding >= 1, padding <= end - position else {
                throw MediaError(.valueOutOfRange, field: "P", byteOffset: packet.count - 1,
                                "padding count \(padding) with \(end - position) bytes after the header")
            }
            header.paddingCount = padding
            end -= padding
        }
        return (header, position..<end)
    }

    /// Parses an RTP packet's header; see ``parse(_:)-(UnsafeRawBufferPointer)``.
    public static func parse(_ packet: [UInt8]) throws(MediaError) -> (header: RTPHeader, payload: Range<Int>) {
        let result = packet.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in try parse(buffer) }
        }
        return try result.get()
    }

    /// Writes the 12-byte fixed header (version 2, no padding, no extension, no CSRC) at the
    /// start of `buffer`, which must hold at least ``fixedSize`` bytes.
    public func write(to buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= Self.fixedSize, "an RTP header needs 12 bytes")
        let first = UInt32(0x80) << 24 | UInt32((marker ? 0x80 : 0) | (payloadType & 0x7F)) << 16 | UInt32(sequenceNumber)
        buffer.storeBytes(of: first.bigEndian, toByteOffset: 0, as: UInt32.self)
        buffer.storeBytes(of: timestamp.bigEndian, toByteOffset: 4, as: UInt32.self)
        buffer.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
    }

    /// The 12-byte fixed header as an array.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.fixedSize) { buffer, count in
            write(to: UnsafeMutableRawBufferPointer(buffer))
            count = Self.fixedSize
        }
    }

    @inline(__always)
    private static func readUInt32(_ buffer: UnsafeRawBufferPointer, at position: Int) -> UInt32 {
        UInt32(buffer[position]) << 24 | UInt32(buffer[position + 1]) << 16 | UInt32(buffer[position + 2]) << 8 | UInt32(buffer[position + 3])
    }
}
