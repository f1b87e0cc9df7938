/// What `h264 receive rtsp://… --events FILE` writes, one JSON object a line beside the
/// servers' `ServerEvent`s (`EventLog`): `playing` once the stream plays and, with
/// `--reconnect`, `disconnected` (why), `reconnected` (the tries and the seconds without a
/// connection) and `resumed` (the first access unit after a reconnection, an IDR, came; `gap`:
/// the seconds since the last one before the disconnection came) — what scripts and tests read
/// instead of the log lines.
enum ReceiveEvent: Encodable, Sendable {
    case playing(url: String, session: String)
    case disconnected(reason: String)
    case reconnected(attempts: Int, downtime: Double)
    case resumed(gap: Double)

    private enum Key: String, CodingKey { case event, url, session, reason, attempts, downtime, gap }

    /// One flat object: `{"event":"reconnected","attempts":1,"downtime":0.21}`.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .playing(let url, let session):
            try container.encode("playing", forKey: .event)
            try container.encode(url, forKey: .url)
            try container.encode(session, forKey: .session)
        case .disconnected(let reason):
            try container.encode("disconnected", forKey: .event)
            try container.encode(reason, forKey: .reason)
        case .reconnected(let attempts, let downtime):
            try container.encode("reconnected", forKey: .event)
            try container.encode(attempts, forKey: .attempts)
            try container.encode(downtime, forKey: .downtime)
        case .resumed(let gap):
            try container.encode("resumed", forKey: .event)
            try container.encode(gap, forKey: .gap)
        }
    }
}
