public import MediaCore
public import H264
/// Cuts access units into RTP packets by the H.264 payload format (RFC 6184).
///
/// ```swift
/// var packetizer = RTPPacketizer(configuration: .init(maximumTransmissionUnit: 1200))
/// try packetizer.packetize(avcc: frame.data, presentationTime: frame.presentationTimeStamp,
///                          formatDescription: frame.formatDescription) { packet in
///     send(iovecs: [packet.prefix, packet.payload])   // two slices, no copy of the payload
/// }
/// ```
///
/// - Packetization-mode 0 (``PacketizationMode/singleNALUnit``) sends each NAL unit in a packet
///   of its own; a NAL unit larger than the payload limit is an error (`MediaError.Code.nalUnitTooLarge`)
///   that says to make smaller slices.
/// - Packetization-mode 1 (``PacketizationMode/nonInterleaved``) also aggregates consecutive
///   small NAL units into STAP-A packets (type 24; F = OR of the aggregated F bits, NRI = the
///   largest NRI) and fragments NAL units larger than the limit into FU-A packets (type 28) of
///   near-equal size, S set on the first and E on the last.
/// - The MTU counts the whole packet: IP header (``Configuration/ipHeaderSize``, 20 for IPv4 or
///   40 for IPv6), UDP header (8), RTP header (12) and payload.
/// - Every packet of an access unit has the same 90 kHz timestamp, computed from its
///   presentation time; the marker bit is set on its last packet; sequence numbers increase by
///   one per packet.
/// - Before every access unit holding an IDR picture, the format's SPS and PPS are sent (as one
///   STAP-A when they fit one packet, else each in its own packet or fragmented), unless the
///   access unit carries them itself.
///
/// Packets are handed to a closure as two byte slices: ``Packet/prefix`` (the RTP header and the
/// payload header bytes, built in scratch memory) and ``Packet/payload`` (a slice of the access
/// unit itself for single NAL units and FU-A fragments), so the caller can send them with one
/// `sendmsg` and two `iovec`s without the payload being copied. Both are valid only during the
/// call of the closure.
public struct RTPPacketizer: Sendable {
    /// RFC 6184 packetization modes (`packetization-mode` in the SDP).
    public enum PacketizationMode: Int, Hashable, Sendable {
        /// 0: one NAL unit per packet, nothing aggregated or fragmented.
        case singleNALUnit = 0
        /// 1: single NAL units, STAP-A aggregation and FU-A fragmentation, in decoding order.
        case nonInterleaved = 1
    }

    /// How packets are made.
    public struct Configuration: Hashable, Sendable {
        /// The packetization mode.
        public var packetizationMode: PacketizationMode
        /// The largest IP packet to send, headers included (1500 on Ethernet; 1200 is a common
        /// choice that survives tunnels).
        public var maximumTransmissionUnit: Int
        /// The IP header size counted in the MTU: 20 (IPv4) or 40 (IPv6).
        public var ipHeaderSize: Int
        /// The RTP payload type (dynamic, 96…127).
        public var payloadType: UInt8
        /// The synchronization source identifier.
        public var ssrc: UInt32
        /// The first packet's sequence number (RFC 3550 asks for a random one).
        public var initialSequenceNumber: UInt16
        /// The timestamp of presentation time zero (RFC 3550 asks for a random one).
        public var initialTimestamp: UInt32

        /// The UDP header size counted in the MTU.
        public static let udpHeaderSize = 8

        /// Creates a configuration; the SSRC, first sequence number and timestamp offset are random
        /// unless given.
        public init(packetizationMode: PacketizationMode = .nonInterleaved, maximumTransmissionUnit: Int = 1500,
                    ipHeaderSize: Int = 20, payloadType: UInt8 = 96, ssrc: UInt32 = .random(in: 0...UInt32.max),
                    initialSequenceNumber: UInt16 = .random(in: 0...UInt16.max),
                    initialTimestamp: UInt32 = .random(in: 0...UInt32.max)) {
            self.packetizationMode = packetizationMode
            self.maximumTransmissionUnit = maximumTransmissionUnit
            self.ipHeaderSize = ipHeaderSize
            self.payloadType = payloadType
            self.ssrc = ssrc
            self.initialSequenceNumber = initialSequenceNumber
            self.initialTimestamp = initialTimestamp
        }

        /// The largest RTP payload: the MTU less the IP, UDP and RTP headers.
        public var payloadLimit: Int { maximumTransmissionUnit - ipHeaderSize - Self.udpHeaderSize - RTPHeader.fixedSize }
    }

    /// The kind of RTP payload a packet carries.
    public enum PayloadKind: Hashable, Sendable {
        /// One whole NAL unit.
        case singleNALUnit
        /// A STAP-A aggregation of this many NAL units.
        case aggregation(count: Int)
        /// One FU-A fragment.
        case fragment(start: Bool, end: Bool)
    }

    /// One packet, as two byte slices valid only during the closure it is given to.
    public struct Packet {
        /// The packet's RTP header fields.
        public var header: RTPHeader
        /// What the payload is.
        public var kind: PayloadKind
        /// The RTP header followed by the payload header byte(s): none for a single NAL unit, the
        /// STAP-A byte, or the FU indicator and FU header.
        public var prefix: UnsafeRawBufferPointer
        /// The rest of the packet: the NAL unit, the fragment (both slices of the input), or the
        /// aggregated size/NAL unit pairs.
        public var payload: UnsafeRawBufferPointer

        /// The size of the whole RTP packet (the UDP payload).
        public var byteCount: Int { prefix.count + payload.count }

        /// The packet's bytes, copied into one array.
        public func bytes() -> [UInt8] {
            var result: [UInt8] = []
            result.reserveCapacity(byteCount)
            result.append(contentsOf: prefix.assumingMemoryBound(to: UInt8.self))
            result.append(contentsOf: payload.assumingMemoryBound(to: UInt8.self))
            return result
        }
    }

    /// The configuration packets are made with.
    public let configuration: Configuration
    /// The sequence number of the next packet.
    public private(set) var nextSequenceNumber: UInt16
    /// How many packets were made.
    public private(set) var packetCount = 0

    private var parameterSetFormat: FormatDescription?
    private var parameterSetBytes: [UInt8] = []
    private var parameterSetRanges: [Range<Int>] = []

    /// Creates a packetizer.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.nextSequenceNumber = configuration.initialSequenceNumber
    }

    /// The 90 kHz RTP timestamp of a presentation time (rounded to the nearest tick, offset by
    /// ``Configuration/initialTimestamp``, wrapping at 2³²).
    public func timestamp(for presentationTime: Duration) -> UInt32 {
        let (seconds, attoseconds) = presentationTime.components
        let picoseconds = attoseconds / 1_000_000
        let half: Int64 = picoseconds >= 0 ? 500_000_000_000 : -500_000_000_000
        let ticks = seconds &* 90_000 &+ (picoseconds * 90_000 + half) / 1_000_000_000_000
        return configuration.initialTimestamp &+ UInt32(truncatingIfNeeded: ticks)
    }

    /// Packetizes one access unit.
    ///
    /// - Parameters:
    ///   - avcc: the access unit's NAL units in AVCC form (length-prefixed).
    ///   - lengthSize: the size of each length prefix (1, 2 or 4).
    ///   - presentationTime: when the picture is shown (gives the 90 kHz timestamp).
    ///   - formatDescription: the stream's parameter sets, sent before an IDR picture that does
    ///     not carry its own; nil sends none.
    ///   - emit: called once per packet, in sending order.
    /// - Throws: as `AVCC.nalUnits(in:lengthSize:)` for malformed input;
    ///   `MediaError.Code.valueOutOfRange` (field `maximumTransmissionUnit`) when the MTU
    ///   leaves fewer than 3 payload bytes; `MediaError.Code.unsupported` for a NAL unit of
    ///   type 0 or 24–31 (unspecified in H.264, payload structures in RFC 6184);
    ///   `MediaError.Code.nalUnitTooLarge` in
    ///   packetization-mode 0 for a NAL unit over the payload limit. Nothing is emitted when
    ///   it throws.
    public mutating func packetize(avcc: UnsafeRawBufferPointer, lengthSize: Int = 4, presentationTime: Duration,
                                   formatDescription: FormatDescription? = nil,
                                   emit: (Packet) -> Void) throws(MediaError) {
        let limit = configuration.payloadLimit
        guard limit >= 3 else {
            throw MediaError(.valueOutOfRange, field: "maximumTransmissionUnit",
                            "an MTU of \(configuration.maximumTransmissionUnit) leaves \(limit) bytes for the RTP payload")
        }
        // Annex-B where lengths belong is sent as its NAL units (the rule of AVCC.read).
        let units = try AVCC.read(avcc, lengthSize: lengthSize, allowingEmptyNALUnits: true).nalUnits
        var hasIDR = false, hasSPS = false, hasPPS = false
        for range in units {
            switch avcc[range.lowerBound] & 0x1F {
            case 5: hasIDR = true
            case 7: hasSPS = true
            case 8: hasPPS = true
            case 0, 24...31:
                throw MediaError(.unsupported, field: "nal_unit_type", byteOffset: range.lowerBound,
                                "NAL unit type \(avcc[range.lowerBound] & 0x1F) cannot be sent in RTP: RFC 6184 gives types 0 and 24–31 other meanings")
            default: break
            }
        }
        let sendParameterSets = hasIDR && !(hasSPS && hasPPS) && formatDescription != nil
        if sendParameterSets, let formatDescription, formatDescription != parameterSetFormat {
            parameterSetBytes = []
            parameterSetRanges = []
            for unit in formatDescription.sequenceParameterSets + formatDescription.pictureParameterSets where !unit.isEmpty {
                parameterSetRanges.append(parameterSetBytes.count..<parameterSetBytes.count + unit.count)
                parameterSetBytes += unit
            }
            parameterSetFormat = formatDescription
        }
        if configuration.packetizationMode == .singleNALUnit {
            let oversized = units.first { $0.count > limit }
                ?? (sendParameterSets ? parameterSetRanges.first { $0.count > limit } : nil)
            if let oversized {
                throw MediaError(.nalUnitTooLarge, field: "packetization-mode",
                                "a \(oversized.count)-byte NAL unit does not fit a \(limit)-byte RTP payload in packetization-mode 0: " +
                                "encode with smaller slices (a maximum slice size) or use packetization-mode 1")
            }
        }
        emitAccessUnit(RFC6184PayloadFormat.self, avcc, units,
                       parameterSets: sendParameterSets ? (parameterSetBytes, parameterSetRanges) : nil,
                       timestamp: timestamp(for: presentationTime), emit: emit)
    }

    /// Packetizes one access unit held in an array; see
    /// ``packetize(avcc:lengthSize:presentationTime:formatDescription:emit:)-(UnsafeRawBufferPointer,_,_,_,_)``.
    public mutating func packetize(avcc: [UInt8], lengthSize: Int = 4, presentationTime: Duration,
                                   formatDescription: FormatDescription? = nil,
                                   emit: (Packet) -> Void) throws(MediaError) {
        let result = avcc.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in
                try packetize(avcc: buffer, lengthSize: lengthSize, presentationTime: presentationTime,
                              formatDescription: formatDescription, emit: emit)
            }
        }
        try result.get()
    }

    /// Packetizes one access unit into packets copied out as arrays (for tests and simple senders;
    /// the closure form avoids the copies).
    public mutating func packets(avcc: [UInt8], lengthSize: Int = 4, presentationTime: Duration,
                                 formatDescription: FormatDescription? = nil) throws(MediaError) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        try packetize(avcc: avcc, lengthSize: lengthSize, presentationTime: presentationTime,
                      formatDescription: formatDescription) { packets.append($0.bytes()) }
        return packets
    }

    // MARK: - Internals

    /// The next packet's header: one more sequence number and packet.
    @inline(__always)
    package mutating func makeHeader(marker: Bool, timestamp: UInt32) -> RTPHeader {
        let header = RTPHeader(marker: marker, payloadType: configuration.payloadType, sequenceNumber: nextSequenceNumber,
                               timestamp: timestamp, ssrc: configuration.ssrc)
        nextSequenceNumber &+= 1
        packetCount += 1
        return header
    }
}
