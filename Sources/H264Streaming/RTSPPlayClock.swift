/// The RTP clock of one stream (a ``Broadcaster``'s packets, shared by its RTSP viewers): the
/// time since the stream's start that each frame is stamped with, and the time the viewers'
/// RTCP sender reports map to wall-clock time. Sans-I/O: the caller passes every instant.
///
/// A frame with a presentation time is stamped from the media clock: its presentation time
/// minus that of the first frame stamped, plus the time from the start to that first frame's
/// arrival; a presentation time more than a second before the last frame's (the source's
/// clock started again: a new publisher, a camera's reconnection) anchors the clock anew at its
/// arrival, so the stream's timestamps never go back. The gaps between frames are the gaps between their presentation times, however the frames
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
    /// How far the stamps run ahead of the arrivals (since PLAY) for the sender reports: fixed
    /// at the first frame's, and moved only when the least lead over a window of 5 s differs
    /// from it by more than ``leadTolerance`` (a source whose clock drifted, or started again).
    private var lead: (fixed: Duration, windowLeast: Duration, windowStart: ContinuousClock.Instant)?
    /// How long one window of the least lead lasts.
    static let leadWindow = Duration.seconds(5)
    /// How far the least lead of a window may be from the fixed one before the reports follow it.
    static let leadTolerance = Duration.milliseconds(100)

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
            if let last, stamp < last.stamp - .seconds(1) {
                anchor = (presentationTime, max(sincePlay, last.stamp + Self.tick))
                stamp = anchor!.stamp
            }
            if stamp < .zero { stamp = .zero }
        } else {
            stamp = sincePlay
            if let last, stamp < last.stamp + Self.tick { stamp = last.stamp + Self.tick }
        }
        last = (stamp, arrival)
        let ahead = stamp - sincePlay
        if var current = lead {
            if arrival - current.windowStart < Self.leadWindow {
                current.windowLeast = min(current.windowLeast, ahead)
            } else {
                let drift = current.windowLeast - current.fixed
                if drift > Self.leadTolerance || drift < .zero - Self.leadTolerance { current.fixed = current.windowLeast }
                (current.windowLeast, current.windowStart) = (ahead, arrival)
            }
            lead = current
        } else {
            lead = (ahead, ahead, arrival)
        }
        return stamp
    }

    /// The RTP time (since PLAY) that corresponds to `now`, for a sender report: the time since
    /// PLAY plus the lead of the stamps over the arrivals (see ``lead``; the time since PLAY
    /// before any frame). One fixed mapping, as FFmpeg's RTP muxer keeps from its first report:
    /// reports made from the last frame's stamp moved by that frame's delay or, with B-frames, by
    /// its place in presentation order, and a player that re-times the tracks at each report
    /// (FFmpeg) stepped them back.
    func time(at now: ContinuousClock.Instant) -> Duration {
        now - playStart + (lead?.fixed ?? .zero)
    }
}
