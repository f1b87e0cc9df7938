public import H264
public import HEVC

/// Turns received RTP packets of an H.265 stream (RFC 7798) back into access units, by the same
/// code as H.264's `RTPDepacketizer` with the payload format of RFC 7798.
///
/// ```swift
/// var depacketizer = HEVCRTPDepacketizer(parameterSets: description.hevcParameterSets())
/// for datagram in socket {
///     depacketizer.append(packet: datagram)
///     while let event = depacketizer.next() {
///         if case .accessUnit(let unit) = event { decode(unit.accessUnit.data) } // 4-byte lengths
///     }
/// }
/// ```
///
/// - Single NAL unit packets (types 0–47), aggregation packets (AP, 48: 16-bit sizes) and
///   fragmentation units (FU, 49) are read; PACI (50) and the undefined types 51–63 are
///   dropped with an `MediaError.Code.unsupported` diagnostic.
/// - With `sprop-max-don-diff` > 0 (``init(configuration:parameterSets:maximumDONDifference:)``)
///   every payload carries decoding order numbers (DONL, and DOND in APs): they are skipped and
///   the NAL units kept in transmission order (senders send in decoding order unless they
///   interleave, which this receiver does not undo).
/// - Sequence order, loss, SSRC and payload-type checks, access-unit size limits and events are
///   `RTPDepacketizer`'s: a lost or missing fragment drops the access unit it belongs to (and
///   that unit only), reported as a loss or a diagnostic with a keyframe request.
/// - Access units end at the packet with the marker bit once they hold a slice segment, and
///   wherever the access-unit rule of `HEVCAccessUnitAssembler` (clause 7.4.2.4.4,
///   `first_slice_segment_in_pic_flag`) begins a new one — timestamps do not cut: a sender whose
///   RTP timestamps never advance (FFmpeg sending a raw `.265`) is cut picture by picture.
///   Each access unit takes the timestamp of its first slice segment's packet.
///
/// No packet, however malformed, makes it trap.
public struct HEVCRTPDepacketizer: Sendable {
    /// How packets are received (the H.264 depacketizer's settings).
    public typealias Configuration = RTPDepacketizer.Configuration
    /// An access unit with its RTP timestamp.
    public typealias ReceivedAccessUnit = RTPReceivedAccessUnit<HEVCAccessUnit>
    /// What the depacketizer found.
    public typealias Event = RTPDepacketizerEvent<HEVCAccessUnit>

    private var core: RTPDepacketizerCore<HEVCAccessUnitAssembler>

    /// Creates a depacketizer.
    ///
    /// - Parameters:
    ///   - configuration: how packets are received.
    ///   - parameterSets: parameter sets known before the first packet (the SDP's `sprop-vps`,
    ///     `sprop-sps` and `sprop-pps`).
    ///   - maximumDONDifference: the SDP's `sprop-max-don-diff`; above 0 every payload carries
    ///     decoding order numbers (RFC 7798 section 7.1).
    public init(configuration: Configuration = Configuration(), parameterSets: HEVCParameterSetCache = HEVCParameterSetCache(),
                maximumDONDifference: Int = 0) {
        core = RTPDepacketizerCore(configuration: configuration, parameterSets: parameterSets)
        core.decodingOrderNumbers = maximumDONDifference > 0
    }

    /// The configuration.
    public var configuration: Configuration { core.configuration }
    /// Packets given to the depacketizer.
    public var packetCount: Int { core.packetCount }
    /// Packets declared lost.
    public var lostPacketCount: Int { core.lostPacketCount }
    /// Access units dropped because of loss or damage.
    public var droppedAccessUnitCount: Int { core.droppedAccessUnitCount }
    /// The parameter sets seen so far (from the stream, or given at creation).
    public var parameterSets: HEVCParameterSetCache { core.parameterSets }
    /// True when payloads are read with decoding order numbers (`sprop-max-don-diff` > 0).
    public var readsDecodingOrderNumbers: Bool { core.decodingOrderNumbers }

    /// Takes one received RTP packet (a UDP payload).
    public mutating func append(packet: UnsafeRawBufferPointer) {
        core.append(packet: packet, owner: [])
    }

    /// Takes one received RTP packet held in an array.
    public mutating func append(packet: [UInt8]) {
        packet.withUnsafeBytes { core.append(packet: $0, owner: []) }
    }

    /// The next event, or nil when none is waiting.
    public mutating func next() -> Event? { core.next() }

    /// Ends the stream: packets still waiting for a missing one are taken (the missing ones are
    /// lost), and the last access unit is handed out if it is complete as far as can be told.
    public mutating func finish() { core.finish() }
}
