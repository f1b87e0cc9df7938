public import MediaCore
/// A reception report block of an RTCP SR or RR (RFC 3550 clause 6.4.1): how one source's RTP
/// stream is received.
public struct RTCPReceptionReport: Hashable, Sendable {
    /// The source reported on.
    public var ssrc: UInt32
    /// The fraction of packets lost since the previous report, in 1/256ths.
    public var fractionLost: UInt8
    /// Packets lost since the start (expected minus received; negative with duplicates), 24 bits
    /// signed.
    public var cumulativeLost: Int32
    /// The highest sequence number received, extended with the count of its wraps in the high
    /// 16 bits.
    public var extendedHighestSequenceNumber: UInt32
    /// The interarrival jitter, in RTP timestamp units (clause 6.4.1, appendix A.8).
    public var jitter: UInt32
    /// The middle 32 bits of the NTP timestamp of the last sender report received (`LSR`); 0
    /// before one.
    public var lastSenderReport: UInt32
    /// The time since that report was received, in 1/65536 s (`DLSR`); 0 before one.
    public var delaySinceLastSenderReport: UInt32

    /// Creates a report block.
    public init(ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequenceNumber: UInt32, jitter: UInt32,
                lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = max(-0x80_0000, min(0x7F_FFFF, cumulativeLost))
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// The block of 24 bytes at `offset` of `bytes` (the caller checked they are there).
    package init(parsing bytes: UnsafeRawBufferPointer, at offset: Int) {
        func word(_ index: Int) -> UInt32 { UInt32(BigEndian.read(bytes, at: offset + index, count: 4)) }
        self.init(ssrc: word(0), fractionLost: bytes[offset + 4],
                  cumulativeLost: Int32(truncatingIfNeeded: word(4) << 8) >> 8,
                  extendedHighestSequenceNumber: word(8), jitter: word(12), lastSenderReport: word(16),
                  delaySinceLastSenderReport: word(20))
    }

    /// The 24 bytes of the block.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        BigEndian.append(Int(ssrc), count: 4, to: &out)
        out.append(fractionLost)
        BigEndian.append(Int(cumulativeLost), count: 3, to: &out)
        for value in [extendedHighestSequenceNumber, jitter, lastSenderReport, delaySinceLastSenderReport] {
            BigEndian.append(Int(value), count: 4, to: &out)
        }
        return out
    }
}

/// An RTCP receiver report (RFC 3550 clause 6.4.2) in a compound packet with an SDES CNAME
/// (clause 6.5.1): what a receiver sends every few seconds so that the sender (a camera) knows
/// it is still there and how well its stream arrives.
///
/// ```swift
/// let report = RTCPReceiverReport(ssrc: mySSRC, receptionReports: [statistics.report(at: now)].compactMap { $0 })
/// send(report.bytes)      // to the RTCP port, or interleaved on the RTCP channel
/// ```
public struct RTCPReceiverReport: Hashable, Sendable {
    /// The reporter's own synchronization source.
    public var ssrc: UInt32
    /// One block per source received (at most 31).
    public var receptionReports: [RTCPReceptionReport]
    /// The canonical name of the SDES item, at most 255 bytes of UTF-8.
    public var canonicalName: String

    /// Creates a report.
    public init(ssrc: UInt32, receptionReports: [RTCPReceptionReport], canonicalName: String = "h264") {
        self.ssrc = ssrc
        self.receptionReports = receptionReports
        self.canonicalName = canonicalName
    }

    /// The compound packet: RR (packet type 201, the first 31 blocks) then SDES with one CNAME.
    public var bytes: [UInt8] {
        let blocks = receptionReports.prefix(31)
        var out: [UInt8] = [0x80 | UInt8(blocks.count), 201]
        BigEndian.append(1 + 6 * blocks.count, count: 2, to: &out)
        BigEndian.append(Int(ssrc), count: 4, to: &out)
        for block in blocks { out += block.bytes }
        return out + RTCPSourceDescription.canonicalNameBytes(ssrc: ssrc, name: canonicalName)
    }
}

/// One chunk of an RTCP SDES packet (RFC 3550 clause 6.5): a source and its items.
public struct RTCPSourceDescription: Hashable, Sendable {
    /// One SDES item: its type (1 CNAME, 2 NAME, … 8 PRIV) and its text.
    public struct Item: Hashable, Sendable {
        /// The item type.
        public var type: UInt8
        /// The text, as UTF-8 (invalid bytes replaced).
        public var text: String

        /// Creates an item.
        public init(type: UInt8, text: String) {
            self.type = type
            self.text = text
        }
    }

    /// The source described.
    public var ssrc: UInt32
    /// Its items, in order.
    public var items: [Item]

    /// Creates a chunk.
    public init(ssrc: UInt32, items: [Item]) {
        self.ssrc = ssrc
        self.items = items
    }

    /// The text of the CNAME item (type 1), if any.
    public var canonicalName: String? { items.first { $0.type == 1 }?.text }

    /// An SDES packet with one chunk: `ssrc` and a CNAME item, ended and padded to 32 bits.
    package static func canonicalNameBytes(ssrc: UInt32, name: String) -> [UInt8] {
        let name = Array(name.utf8.prefix(255))
        // SSRC, CNAME item (type 1, length, text), END (a zero byte), padding to 4 bytes.
        let chunkLength = (4 + 2 + name.count + 1 + 3) / 4 * 4
        var out: [UInt8] = [0x81, 202]
        BigEndian.append(chunkLength / 4, count: 2, to: &out) // 32-bit words after the header
        BigEndian.append(Int(ssrc), count: 4, to: &out)
        out += [1, UInt8(name.count)] + name
        return out + [UInt8](repeating: 0, count: chunkLength - 4 - 2 - name.count)
    }

    /// The `count` chunks of an SDES packet's body; each ends at an END item (type 0) and the
    /// next begins at a 32-bit boundary.
    package static func chunks(count: Int, in body: UnsafeRawBufferPointer, at offset: Int) throws(MediaError) -> [RTCPSourceDescription] {
        var chunks: [RTCPSourceDescription] = []
        var index = 0
        for _ in 0..<count {
            guard body.count - index >= 4 else {
                throw MediaError(.truncated, field: "SDES", byteOffset: offset + 4 + index, "an SDES chunk past the packet's end")
            }
            var chunk = RTCPSourceDescription(ssrc: UInt32(BigEndian.read(body, at: index, count: 4)), items: [])
            index += 4
            while true {
                guard index < body.count else {
                    throw MediaError(.truncated, field: "SDES", byteOffset: offset + 4 + index, "an SDES chunk without its END item")
                }
                let type = body[index]
                if type == 0 { break }
                guard index + 2 <= body.count, index + 2 + Int(body[index + 1]) <= body.count else {
                    throw MediaError(.truncated, field: "SDES", byteOffset: offset + 4 + index, "an SDES item past the packet's end")
                }
                let text = UnsafeRawBufferPointer(rebasing: body[(index + 2)..<(index + 2 + Int(body[index + 1]))])
                chunk.items.append(Item(type: type, text: String(decoding: text, as: UTF8.self)))
                index += 2 + text.count
            }
            index = (index + 4) / 4 * 4 // past the END byte and the padding
            chunks.append(chunk)
        }
        return chunks
    }
}
