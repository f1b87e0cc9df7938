import RTP

/// The presentation times of an RTSP session's tracks (video, audio) on one timeline. Cameras
/// start the tracks' RTP clocks independently (random origins, different rates), so the
/// timestamps of one track say nothing about the other's; the server's RTCP sender reports do
/// (RFC 3550 clause 6.4.1: each maps an RTP timestamp of its track to the same NTP wall clock).
///
/// - The first frame of either track (the *reference*) is at `start`; later frames of that
///   track are `start` plus their RTP time since it (``RTPTimeline``: unwrapped across 2³²).
/// - The other track's first frame is placed by its arrival: `start` plus the time since the
///   reference's first arrived; its later frames follow their RTP time from there.
/// - Once both tracks' sender reports are known, a frame of the other track is placed by wall
///   clock: the reference's latest frame time plus the difference of the two wall-clock times
///   (each from its own track's last report), so both tracks share the sender's clock.
///
/// Sans-I/O: arrivals are given as durations on any monotonic clock (only differences count).
struct RTSPSessionTimeline: Sendable {
    /// A track of the session.
    enum Track: Int, Sendable {
        case video = 0
        case audio = 1
    }

    private struct TrackState: Sendable {
        var unwrapper: RTPTimeline
        /// A tick count (since the track's first timestamp) and its time.
        var anchor: (ticks: Int64, time: Duration)?
        /// The latest timestamp placed and its time.
        var last: (timestamp: UInt32, time: Duration)?
        var report: RTCPSenderReport?
        var clockRate: Int { unwrapper.clockRate }
    }

    /// The time of the first frame.
    let start: Duration
    private var tracks: [TrackState]
    private var reference: Track?
    private var originArrival: Duration?

    /// A timeline whose first frame is at `start`, with each track's RTP clock rate.
    init(start: Duration = .zero, videoClockRate: Int = 90_000, audioClockRate: Int = 90_000) {
        self.start = start
        tracks = [TrackState(unwrapper: RTPTimeline(clockRate: videoClockRate)),
                  TrackState(unwrapper: RTPTimeline(clockRate: audioClockRate))]
    }

    /// The audio track's clock rate, once known (before its first frame).
    mutating func setAudioClockRate(_ clockRate: Int) {
        guard tracks[1].last == nil else { return }
        tracks[1].unwrapper = RTPTimeline(clockRate: clockRate)
    }

    /// Keeps `report`, the latest sender report of `track`'s source.
    mutating func senderReport(_ report: RTCPSenderReport, for track: Track) {
        tracks[track.rawValue].report = report
    }

    /// Whether a frame of `track` is placed by the sender reports (both known, and the
    /// reference track has a frame).
    func isSynchronized(_ track: Track) -> Bool {
        guard let reference, reference != track else { return reference != nil && tracks[track.rawValue].report != nil }
        return tracks[reference.rawValue].report != nil && tracks[reference.rawValue].last != nil && tracks[track.rawValue].report != nil
    }

    /// The presentation time of `timestamp`, a frame of `track` that arrived at `arrival`.
    mutating func time(of timestamp: UInt32, track: Track, arrival: Duration) -> Duration {
        var state = tracks[track.rawValue]
        let ticks = state.unwrapper.ticks(of: timestamp)
        if reference == nil {
            reference = track
            originArrival = arrival
        }
        if state.anchor == nil {
            let sinceOrigin = reference == track ? Duration.zero : Swift.max(arrival - (originArrival ?? arrival), .zero)
            state.anchor = (ticks, start + sinceOrigin)
        }
        var time = state.anchor!.time + .seconds(1) * (ticks - state.anchor!.ticks) / state.clockRate
        if let reference, reference != track, let own = state.report,
           let other = tracks[reference.rawValue].report, let latest = tracks[reference.rawValue].last {
            let wall = own.wallClock(of: timestamp, clockRate: state.clockRate)
            let referenceWall = other.wallClock(of: latest.timestamp, clockRate: tracks[reference.rawValue].clockRate)
            time = latest.time + (wall - referenceWall)
            state.anchor = (ticks, time)
        }
        state.last = (timestamp, time)
        tracks[track.rawValue] = state
        return time
    }
}
