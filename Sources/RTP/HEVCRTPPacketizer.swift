public import H264

/// Cuts H.265 access units into RTP packets by RFC 7798, with the header, sequence-number and
/// timestamp machinery of H.264's `RTPPacketizer` and the same payload loop.
///
/// ```swift
/// var packetizer = HEVCRTPPacketizer(configuration: .init(maximumTransmissionUnit: 1200))
/// try packetizer.packetize(hvcc: unit.data, presentationTime: time, parameterSets: [vps, sps, pps]) { packet in
///     send(iovecs: [packet.prefix, packet.payload])
/// }
/// ```
///
/// - A NAL unit that fits the payload limit is sent whole (a single NAL unit packet); one that
///   does not is fragmented into FU packets (type 49) of near-equal size, S on the first and E
///   on the last.
/// - With `packetizationMode` `.nonInterleaved` (the default) consecutive small NAL units are
///   aggregated into AP packets (type 48: F the OR of their F bits, the lowest layer and
///   temporal ids); `.singleNALUnit` makes no APs (FUs still).
/// - No DONL is written (`sprop-max-don-diff` 0): packets go in decoding order.
/// - Every packet of an access unit has the same 90 kHz timestamp; the marker bit is on its
///   last packet; before an IRAP access unit that does not carry its own VPS, SPS and PPS, the
///   `parameterSets` given are sent.
public struct HEVCRTPPacketizer: Sendable {
    /// How packets are made (the H.264 packetizer's settings).
    public typealias Configuration = RTPPacketizer.Configuration
    /// One packet, as two byte slices valid only during the closure it is given to.
    public typealias Packet = RTPPacketizer.Packet

    private var packetizer: RTPPacketizer
    private var parameterSets: [[UInt8]] = []
    private var parameterSetBytes: [UInt8] = []
    private var parameterSetRanges: [Range<Int>] = []

    /// Creates a packetizer.
    public init(configuration: Configuration = Configuration()) {
        packetizer = RTPPacketizer(configuration: configuration)
    }

    /// The configuration packets are made with.
    public var configuration: Configuration { packetizer.configuration }
    /// The sequence number of the next packet.
    public var nextSequenceNumber: UInt16 { packetizer.nextSequenceNumber }
    /// How many packets were made.
    public var packetCount: Int { packetizer.packetCount }

    /// The 90 kHz RTP timestamp of a presentation time (as `RTPPacketizer` computes it).
    public func timestamp(for presentationTime: Duration) -> UInt32 { packetizer.timestamp(for: presentationTime) }

    /// Packetizes one access unit.
    ///
    /// - Parameters:
    ///   - hvcc: the access unit's NAL units, length-prefixed (as `HEVCAccessUnit.data`).
    ///   - lengthSize: the size of each length prefix (1, 2 or 4).
    ///   - presentationTime: when the picture is shown (gives the 90 kHz timestamp).
    ///   - parameterSets: the stream's VPS, SPS and PPS NAL units, sent before an IRAP access
    ///     unit that lacks any of the three kinds; empty sends none.
    ///   - emit: called once per packet, in sending order.
    /// - Throws: the length-prefix reader's errors for malformed input; `valueOutOfRange`
    ///   (field `maximumTransmissionUnit`) when the MTU leaves fewer than 4 payload bytes;
    ///   `truncated` for a NAL unit shorter than its 2-byte header; `unsupported` for a NAL unit
    ///   of type 48–63 (the payload structures of RFC 7798, and unspecified). Nothing is
    ///   emitted when it throws.
    public mutating func packetize(hvcc: UnsafeRawBufferPointer, lengthSize: Int = 4, presentationTime: Duration,
                                   parameterSets: [[UInt8]] = [], emit: (Packet) -> Void) throws(MediaError) {
        let limit = configuration.payloadLimit
        guard limit >= RTPPacketizer.minimumPayloadLimit(RFC7798PayloadFormat.self) else {
            throw MediaError(.valueOutOfRange, field: "maximumTransmissionUnit",
                            "an MTU of \(configuration.maximumTransmissionUnit) leaves \(limit) bytes for the RTP payload")
        }
        let units = try AVCC.read(hvcc, lengthSize: lengthSize, allowingEmptyNALUnits: true).nalUnits
        var kinds = Set<UInt8>()
        var irap = false
        for range in units {
            guard range.count >= 2 else {
                throw MediaError(.truncated, field: "nal_unit_header", byteOffset: range.lowerBound,
                                "a NAL unit of \(range.count) bytes, shorter than its 2-byte header")
            }
            let type = (hvcc[range.lowerBound] >> 1) & 0x3F
            guard type < 48 else {
                throw MediaError(.unsupported, field: "nal_unit_type", byteOffset: range.lowerBound,
                                "NAL unit type \(type) cannot be sent in RTP: RFC 7798 gives types 48–63 other meanings")
            }
            kinds.insert(type)
            if (16...23).contains(type) { irap = true }
        }
        let sendParameterSets = irap && !kinds.isSuperset(of: [32, 33, 34]) && !parameterSets.isEmpty
        if sendParameterSets, parameterSets != self.parameterSets {
            self.parameterSets = parameterSets
            parameterSetBytes = []
            parameterSetRanges = []
            for unit in parameterSets where unit.count >= 2 {
                parameterSetRanges.append(parameterSetBytes.count..<parameterSetBytes.count + unit.count)
                parameterSetBytes += unit
            }
        }
        packetizer.emitAccessUnit(RFC7798PayloadFormat.self, hvcc, units,
                                  parameterSets: sendParameterSets ? (parameterSetBytes, parameterSetRanges) : nil,
                                  timestamp: timestamp(for: presentationTime), emit: emit)
    }

    /// Packetizes one H.264 access unit by RFC 6184 with the same sequence numbers and timestamps
    /// (the one `RTPPacketizer` inside): what lets ``VideoRTPPacketizer`` send either codec.
    package mutating func packetize(avcc: UnsafeRawBufferPointer, presentationTime: Duration, formatDescription: FormatDescription,
                                    emit: (Packet) -> Void) throws(MediaError) {
        try packetizer.packetize(avcc: avcc, presentationTime: presentationTime, formatDescription: formatDescription, emit: emit)
    }

    /// Packetizes one access unit into packets copied out as arrays (for tests and simple
    /// senders; the closure form avoids the copies). See
    /// ``packetize(hvcc:lengthSize:presentationTime:parameterSets:emit:)``.
    public mutating func packets(hvcc: [UInt8], lengthSize: Int = 4, presentationTime: Duration,
                                 parameterSets: [[UInt8]] = []) throws(MediaError) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        let result = hvcc.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in
                try packetize(hvcc: buffer, lengthSize: lengthSize, presentationTime: presentationTime,
                              parameterSets: parameterSets) { packets.append($0.bytes()) }
            }
        }
        try result.get()
        return packets
    }
}
