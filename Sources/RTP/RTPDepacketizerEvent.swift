public import MediaCore
/// What a depacketizer found: ``RTPDepacketizer/Event`` (access units in one AVCC array) and
/// ``RTPZeroCopyDepacketizer/Event`` (access units that refer to the received packets).
public enum RTPDepacketizerEvent<Unit: Sendable>: Sendable {
    /// A complete access unit, in decoding order.
    case accessUnit(RTPReceivedAccessUnit<Unit>)
    /// Packets were lost; the access unit they belonged to is dropped.
    case loss(RTPDepacketizer.Loss)
    /// The receiver should ask the sender for an IDR picture (RTCP PLI or FIR): pictures after a
    /// loss refer to what was lost.
    case keyframeRequest
    /// A packet or NAL unit was dropped: unsupported, damaged, late or out of place.
    case diagnostic(MediaError)
}

extension RTPDepacketizerEvent: Equatable where Unit: Equatable {}
extension RTPDepacketizerEvent: Hashable where Unit: Hashable {}

/// An access unit with its RTP timestamp: ``RTPDepacketizer/ReceivedAccessUnit`` and
/// ``RTPZeroCopyDepacketizer/ReceivedAccessUnit``.
public struct RTPReceivedAccessUnit<Unit: Sendable>: Sendable {
    /// The access unit: an `AccessUnit` (AVCC, 4-byte lengths) or an `AccessUnitView`, with
    /// the format its slices refer to.
    public var accessUnit: Unit
    /// The 90 kHz RTP timestamp of its packets.
    public var timestamp: UInt32
    /// True when a packet with the marker bit ended it (false: the next access unit or the end
    /// of the stream did).
    public var endedByMarker: Bool
    /// The sender's wall-clock time of the access unit, as the time since the Unix epoch (1970),
    /// from the last RTCP sender report (``RTCPSenderReport/wallClock(of:clockRate:)``); nil
    /// before the first one, and from a depacketizer (which sees no RTCP).
    public var wallClock: Duration?

    /// Creates a received access unit (as a depacketizer hands them out, or to feed an
    /// `RTPDecoder` from another source).
    ///
    /// - Parameters:
    ///   - accessUnit: the access unit.
    ///   - timestamp: the 90 kHz RTP timestamp of its packets.
    ///   - endedByMarker: whether a packet with the marker bit ended it.
    ///   - wallClock: the sender's wall-clock time of it (since 1970), if known.
    public init(accessUnit: Unit, timestamp: UInt32, endedByMarker: Bool, wallClock: Duration? = nil) {
        self.accessUnit = accessUnit
        self.timestamp = timestamp
        self.endedByMarker = endedByMarker
        self.wallClock = wallClock
    }
}

extension RTPReceivedAccessUnit: Equatable where Unit: Equatable {}
extension RTPReceivedAccessUnit: Hashable where Unit: Hashable {}
