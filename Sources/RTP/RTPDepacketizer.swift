public import H264
/// Turns received RTP packets of an H.264 stream (RFC 6184, packetization-modes 0 and 1) back
/// into access units.
///
/// ```swift
/// var depacketizer = RTPDepacketizer()
/// for datagram in socket {
///     depacketizer.append(packet: datagram)
///     while let event = depacketizer.next() {
///         switch event {
///         case .accessUnit(let unit):   decode(unit.accessUnit.data)        // AVCC, 4-byte lengths
///         case .loss(let loss):         log("lost \(loss.packetCount) packets")
///         case .keyframeRequest:        sendPictureLossIndication()
///         case .diagnostic(let error):  log(error)
///         }
///     }
/// }
/// ```
///
/// - Single NAL unit packets (types 1–23), STAP-A (24) and FU-A (28) are read; STAP-B (25),
///   MTAP16 (26), MTAP24 (27) and FU-B (29) — interleaved mode only — and the undefined types 0,
///   30 and 31 are dropped with an `MediaError.Code.unsupported` diagnostic.
/// - RTP header extensions, CSRC lists and padding are parsed and skipped (``RTPHeader``).
/// - Packets are put back in sequence-number order within a window of
///   ``Configuration/reorderWindow`` packets: a packet that is missing while that many later
///   ones wait is declared lost.
/// - A loss drops the access unit it hit (what was received of it, and its remaining packets:
///   those with the same timestamp as the first packet after the gap), reports a
///   ``RTPDepacketizerEvent/loss(_:)`` and raises ``RTPDepacketizerEvent/keyframeRequest``. An FU-A without its start
///   fragment (a stream joined mid-NAL unit) drops that access unit the same way, with a
///   `MediaError.Code.missingFragmentStart` diagnostic. A single FU-A with both S and E set is
///   a whole NAL unit.
/// - Access units end at the packet with the marker bit, once they hold a picture; a sender
///   that never sets the marker bit is handled by the access-unit boundary rule of
///   `AccessUnitAssembler` (clause 7.4.1.2.4): its access units come out when the next one
///   begins, or at ``RTPDepacketizing/finish()``.
///
/// No packet, however malformed, makes it trap: damaged packets are reported as
/// ``RTPDepacketizerEvent/diagnostic(_:)`` and skipped.
///
/// Each access unit is one AVCC array, a copy of its payload bytes. ``RTPZeroCopyDepacketizer``
/// does the same by the same code without that copy: its access units refer to the buffers the
/// packets came in. Both are ``RTPDepacketizing``: code that only reads events can take either.
public struct RTPDepacketizer: RTPDepacketizerCoreWrapper {
    /// How packets are received.
    public struct Configuration: Hashable, Sendable {
        /// How many later packets may wait for a missing one before it is declared lost (0: a
        /// gap is a loss at once).
        public var reorderWindow: Int
        /// The payload type to accept; nil accepts any.
        public var payloadType: UInt8?
        /// The largest access unit kept while it is received, in bytes: one that grows past it
        /// (a sender that never ends a fragmented NAL unit or a picture) is dropped with an
        /// `MediaError.Code.overflow` diagnostic.
        public var maximumAccessUnitSize: Int

        /// Creates a configuration.
        public init(reorderWindow: Int = 16, payloadType: UInt8? = nil, maximumAccessUnitSize: Int = 32 << 20) {
            self.reorderWindow = Swift.max(0, reorderWindow)
            self.payloadType = payloadType
            self.maximumAccessUnitSize = Swift.max(1, maximumAccessUnitSize)
        }
    }

    /// An access unit with its RTP timestamp; its `accessUnit` is AVCC with 4-byte lengths.
    public typealias ReceivedAccessUnit = RTPReceivedAccessUnit<AccessUnit>

    /// Packets that never arrived.
    public struct Loss: Hashable, Sendable {
        /// The sequence number of the first lost packet.
        public var firstSequenceNumber: UInt16
        /// How many consecutive packets were lost.
        public var packetCount: Int
        /// True when an access unit already partly received was dropped because of the loss.
        public var droppedPartialAccessUnit: Bool
    }

    /// What the depacketizer found.
    public typealias Event = RTPDepacketizerEvent<AccessUnit>

    /// Everything but how access units are kept; its counts, events and end are read through
    /// ``RTPDepacketizing``.
    package var core: RTPDepacketizerCore<AccessUnitAssembler>

    /// Creates a depacketizer, optionally knowing parameter sets already (e.g. from the SDP's
    /// `sprop-parameter-sets`).
    public init(configuration: Configuration = Configuration(), parameterSets: ParameterSetCache = ParameterSetCache()) {
        core = RTPDepacketizerCore(configuration: configuration, parameterSets: parameterSets)
    }

    /// Takes one received RTP packet (a UDP payload).
    public mutating func append(packet: UnsafeRawBufferPointer) {
        core.append(packet: packet, owner: [])
    }

    /// Takes one received RTP packet held in an array.
    public mutating func append(packet: [UInt8]) {
        packet.withUnsafeBytes { core.append(packet: $0, owner: []) }
    }

    /// The next event, or nil when none is waiting.
    @inlinable
    public mutating func next() -> Event? {
        // Called after every packet, and most find nothing: that answer is made inline.
        hasEvents ? nextEvent() : nil
    }

    /// True when ``next()`` has an event to return (a mutating getter: asking copies nothing).
    @usableFromInline
    package var hasEvents: Bool { mutating get { core.hasEvents } }

    /// ``next()`` when ``hasEvents``.
    @usableFromInline
    package mutating func nextEvent() -> Event? { core.next() }
}
