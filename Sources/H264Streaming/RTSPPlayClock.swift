/// The RTP clock of one playing session: the time since PLAY that each frame is stamped with,
/// and the time the session's RTCP sender reports map to wall-clock time. Sans-I/O: the caller
/// passes every instant.
///
/// A frame with a presentation time is stamped from the media clock: its presentation time
/// minus that of the first frame this session sent, plus the time from PLAY to that first
/// frame's arrival. So RTP-Info's `rtptime` (time zero) still maps to the start of play, and
/// the gaps between frames are the gaps between their presentation times, however the frames
/// reach the connection (two frames arriving in one turn of a loaded event loop keep their
/// 33 ms). A frame without one is stamped with its arrival time since PLAY, at least one 90 kHz
/// tick after the previous frame (players refuse equal timestamps).
struct RTSPPlayClock: Sendable {
    /// One 90 kHz tick.
    static let tick = Duration.nanoseconds(11_112)

    /// When PLAY started the stream.
    let playStart: ContinuousClock.Instant
    /// The first frame with a presentation time: that time, and its stamp (its arrival since PLAY).
    private var anchor: (presentationTime: Duration, stamp: Duration)?
    /// The last frame stamped: its stamp and its arrival.
    private var last: (stamp: Duration, arrival: ContinuousClock.Instant)?

    /// A clock for a session whose PLAY started the stream at `playStart`.
    init(playStart: ContinuousClock.Instant) {
        self.playStart = playStart
    }

    /// The time since PLAY to stamp a frame with: from `presentationTime` (the media clock) when
    /// the frame has one, else from `arrival`.
    mutating func stamp(presentationTime: Duration?, arrival: ContinuousClock.Instant) -> Duration {
        let sincePlay = arrival - playStart
        var stamp: Duration
        if let presentationTime {
            if anchor == nil { anchor = (presentationTime, max(sincePlay, .zero)) }
            stamp = anchor!.stamp + (presentationTime - anchor!.presentationTime)
            if stamp < .zero { stamp = .zero }
        } else {
            stamp = sincePlay
            if let last, stamp < last.stamp + Self.tick { stamp = last.stamp + Self.tick }
        }
        last = (stamp, arrival)
        return stamp
    }

    /// The RTP time (since PLAY) that corresponds to `now`, for a sender report: the last frame's
    /// stamp plus the time since it arrived (the time since PLAY before any frame).
    func time(at now: ContinuousClock.Instant) -> Duration {
        guard let last else { return now - playStart }
        return last.stamp + (now - last.arrival)
    }
}
