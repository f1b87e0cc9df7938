/// What `h264 receive rtsp://… --events FILE` writes, one JSON object a line beside the
/// servers' `ServerEvent`s (`EventLog`): `playing` once the stream plays and, with
/// `--reconnect`, `disconnected` (why), `reconnected` (the tries and the seconds without a
/// connection) and `resumed` (the first access unit after a reconnection, an IDR, came; `gap`:
/// the seconds since the last one before the disconnection came) — what scripts and tests read
/// instead of the log lines. One flat object, its absent fields left out:
/// `{"attempts":1,"downtime":0.21,"event":"reconnected"}`.
struct ReceiveEvent: Encodable, Sendable {
    let event: String
    var url: String?, session: String?, reason: String?, attempts: Int?, downtime: Double?, gap: Double?

    static func playing(url: String, session: String) -> Self { Self(event: "playing", url: url, session: session) }
    static func disconnected(reason: String) -> Self { Self(event: "disconnected", reason: reason) }
    static func reconnected(attempts: Int, downtime: Double) -> Self { Self(event: "reconnected", attempts: attempts, downtime: downtime) }
    static func resumed(gap: Double) -> Self { Self(event: "resumed", gap: gap) }
}
