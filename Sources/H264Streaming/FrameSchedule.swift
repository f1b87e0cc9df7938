/// When each frame of a live stream is due: frame i at start + i × interval (absolute
/// deadlines, so the rate does not drift).
///
/// A viewer waiting for an IDR pulls the due frame forward, but never more than one interval
/// ahead of its deadline, so the schedule still holds and a new viewer has its IDR at once
/// rather than up to a frame later. A sender that fell behind by over a second starts counting
/// again from now instead of bursting.
///
/// The schedule reads no clock: the caller gives it the instants (``advance(now:)``), so tests
/// run it on made-up times.
public struct FrameSchedule: Sendable {
    /// The time between frames.
    public let interval: Duration
    /// The next frame's deadline.
    public private(set) var deadline: ContinuousClock.Instant

    /// A schedule whose first frame is due at `start`, the next ones `interval` apart.
    public init(interval: Duration, start: ContinuousClock.Instant) {
        self.interval = interval
        deadline = start
    }

    /// When the next frame may be encoded: its deadline, or one interval earlier when a viewer
    /// waits for an IDR.
    public func due(keyframeWanted: Bool) -> ContinuousClock.Instant {
        keyframeWanted ? deadline - interval : deadline
    }

    /// Moves to the next frame, encoded at `now`.
    public mutating func advance(now: ContinuousClock.Instant) {
        deadline += interval
        if deadline < now - .seconds(1) { deadline = now }
    }
}
