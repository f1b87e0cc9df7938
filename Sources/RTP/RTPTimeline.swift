/// RTP timestamps as presentation times: the time since the first timestamp (plus a start),
/// each step from the previous timestamp read as a signed 32-bit difference (RFC 3550 clause
/// 5.1: timestamps wrap at 2³²), so the time goes on across a wrap and may step back (B-frames
/// arrive in decoding order).
///
/// ```swift
/// var timeline = RTPTimeline()
/// let time = timeline.time(of: received.timestamp) // .zero for the first
/// ```
public struct RTPTimeline: Sendable {
    /// The last timestamp and its extended value (ticks since the first); nil before the first.
    private var last: (timestamp: UInt32, ticks: Int64)?
    /// The time of the first timestamp.
    public let start: Duration
    /// The clock rate of the timestamps (90 kHz for video, RFC 6184 section 8.2.1).
    public let clockRate: Int

    /// A timeline whose first timestamp is at `start`.
    ///
    /// - Parameters:
    ///   - start: the time of the first timestamp (a reconnected stream goes on from its last).
    ///   - clockRate: the timestamps' clock rate.
    public init(start: Duration = .zero, clockRate: Int = 90_000) {
        self.start = start
        self.clockRate = max(1, clockRate)
    }

    /// Whether a timestamp has been read.
    public var hasStarted: Bool { last != nil }

    /// The ticks from the first timestamp to `timestamp` (the first is 0), and the timeline
    /// moves on to it.
    public mutating func ticks(of timestamp: UInt32) -> Int64 {
        let ticks = last.map { $0.ticks + Int64(Int32(bitPattern: timestamp &- $0.timestamp)) } ?? 0
        last = (timestamp, ticks)
        return ticks
    }

    /// The presentation time of `timestamp`: `start` plus the time from the first timestamp.
    public mutating func time(of timestamp: UInt32) -> Duration {
        start + .seconds(1) * ticks(of: timestamp) / clockRate
    }
}
