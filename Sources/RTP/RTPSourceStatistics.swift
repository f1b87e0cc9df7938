/// What a receiver counts of one RTP source for its RTCP reception reports (RFC 3550 appendix
/// A.1, A.3 and A.8): the extended highest sequence number, the packets expected and received,
/// the loss since the previous report and the interarrival jitter. Sans-I/O: the caller gives
/// each packet's header with its arrival time in RTP timestamp units, and asks for a
/// ``report(lastSenderReport:delaySinceLastSenderReport:)`` when it sends one.
///
/// A packet of another SSRC starts the counts over (the sender restarted); so does a jump of
/// more than 3000 sequence numbers ahead or 100 back (appendix A.1's `MAX_DROPOUT` and
/// `MAX_MISORDER`).
public struct RTPSourceStatistics: Hashable, Sendable {
    /// The source counted; nil before the first packet.
    public private(set) var ssrc: UInt32?
    /// Packets received from it (duplicates included, as appendix A.3 counts them).
    public private(set) var received = 0
    private var baseSequence: UInt32 = 0
    private var maximumSequence: UInt16 = 0
    private var cycles: UInt32 = 0
    private var expectedPrior = 0
    private var receivedPrior = 0
    private var lastTransit: Int64?
    private var jitterTimes16: Int64 = 0

    /// No packet yet.
    public init() {}

    /// The extended highest sequence number received: wraps in the high 16 bits.
    public var extendedHighestSequenceNumber: UInt32 { cycles | UInt32(maximumSequence) }

    /// Packets expected from the first to the highest sequence number.
    public var expected: Int { Int(Int64(extendedHighestSequenceNumber) - Int64(baseSequence) + 1) }

    /// Packets lost since the first (expected minus received).
    public var cumulativeLost: Int { ssrc == nil ? 0 : expected - received }

    /// The interarrival jitter, in RTP timestamp units.
    public var jitter: UInt32 { UInt32(clamping: jitterTimes16 >> 4) }

    /// Counts a packet with `header` that arrived at `arrival`, a time in RTP timestamp units
    /// on the receiver's clock (any origin; wrapping at 2³²).
    public mutating func count(_ header: RTPHeader, arrival: UInt32) {
        guard ssrc == header.ssrc else { return restart(header, arrival: arrival) }
        let delta = header.sequenceNumber &- maximumSequence
        if delta != 0 && delta < 3000 {
            if header.sequenceNumber < maximumSequence { cycles &+= 1 << 16 }
            maximumSequence = header.sequenceNumber
        } else if delta != 0 && delta <= UInt16.max - 100 {
            return restart(header, arrival: arrival) // a jump: the sender restarted its sequence
        }
        received += 1
        // Appendix A.8: J += (|D| − J) / 16, kept as 16 J in integers.
        let transit = Int64(Int32(bitPattern: arrival &- header.timestamp))
        if let lastTransit {
            let d = abs(transit - lastTransit)
            jitterTimes16 += d - (jitterTimes16 + 8) / 16
        }
        lastTransit = transit
    }

    /// The reception report block for now, and the loss fraction's interval restarted; nil
    /// before the first packet.
    ///
    /// - Parameters:
    ///   - lastSenderReport: ``RTCPSenderReport/compactNTPTimestamp`` of the last sender report
    ///     received (0 without one).
    ///   - delaySinceLastSenderReport: the time since it arrived in 1/65536 s (0 without one).
    public mutating func report(lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) -> RTCPReceptionReport? {
        guard let ssrc else { return nil }
        let expectedInterval = expected - expectedPrior
        let lostInterval = expectedInterval - (received - receivedPrior)
        expectedPrior = expected
        receivedPrior = received
        let fraction = expectedInterval <= 0 || lostInterval <= 0 ? 0 : min(255, (lostInterval << 8) / expectedInterval)
        return RTCPReceptionReport(ssrc: ssrc, fractionLost: UInt8(fraction), cumulativeLost: Int32(clamping: cumulativeLost),
                                   extendedHighestSequenceNumber: extendedHighestSequenceNumber, jitter: jitter,
                                   lastSenderReport: lastSenderReport, delaySinceLastSenderReport: delaySinceLastSenderReport)
    }

    private mutating func restart(_ header: RTPHeader, arrival: UInt32) {
        self = RTPSourceStatistics()
        ssrc = header.ssrc
        baseSequence = UInt32(header.sequenceNumber)
        maximumSequence = header.sequenceNumber
        received = 1
        lastTransit = Int64(Int32(bitPattern: arrival &- header.timestamp))
    }
}
