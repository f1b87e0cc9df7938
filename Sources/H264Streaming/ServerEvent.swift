/// Something that happened to a server's viewers, sessions or publishers, as it happened: what
/// ``Broadcaster/events`` and ``RTSPServer/events`` deliver, so a program (or a supervisor of
/// `h264 serve --events`) knows who is connected without reading log text.
///
/// Encoded (`Encodable`) as one flat JSON object with an `event` key: `listening`,
/// `viewer-joined`, `viewer-skipped`, `viewer-left`, `session-set-up`, `session-playing`,
/// `session-recording`, `session-ended`, and the case's values under their names.
public enum ServerEvent: Sendable, Hashable, Encodable {
    /// A server is listening at `url` (`rtsp://127.0.0.1:8554/live`, `tcp://0.0.0.0:5000`,
    /// `udp://0.0.0.0:5004`), with the port the system chose for port 0. The libraries return
    /// their bound addresses; programs that report them (the `h264` tool) use this case.
    case listening(url: String)
    /// A viewer joined a ``Broadcaster`` as client `client` (its id there) from `address`.
    case viewerJoined(client: Int, address: String)
    /// Client `client` fell `frames` frames behind and was skipped to the next IDR.
    case viewerSkipped(client: Int, frames: Int)
    /// Client `client` left after `framesSent` frames.
    case viewerLeft(client: Int, framesSent: Int)
    /// An RTSP session `session` was set up (SETUP answered 200) for the mount `path` from
    /// `address`, with the `Transport` header the server answered.
    case sessionSetUp(session: String, path: String, address: String, transport: String)
    /// RTSP session `session` plays as client `client` of its path's broadcaster.
    case sessionPlaying(session: String, client: Int)
    /// RTSP session `session` records (its publisher's RECORD was answered 200).
    case sessionRecording(session: String)
    /// RTSP session `session` ended; `reason`: `teardown` (the client's TEARDOWN), `timed out`
    /// (nothing heard for the session timeout), `connection closed` (by the client, or by the
    /// server's shutdown), `closed` (the server closed the connection after a bad request).
    case sessionEnded(session: String, reason: String)

    /// The `event` key of the JSON encoding.
    public var name: String {
        switch self {
        case .listening: "listening"
        case .viewerJoined: "viewer-joined"
        case .viewerSkipped: "viewer-skipped"
        case .viewerLeft: "viewer-left"
        case .sessionSetUp: "session-set-up"
        case .sessionPlaying: "session-playing"
        case .sessionRecording: "session-recording"
        case .sessionEnded: "session-ended"
        }
    }

    private enum Key: String, CodingKey {
        case event, url, client, address, frames, framesSent, session, path, transport, reason
    }

    /// Encodes the event as one flat object: `{"event":"session-ended","session":"…","reason":"teardown"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(name, forKey: .event)
        switch self {
        case .listening(let url):
            try container.encode(url, forKey: .url)
        case .viewerJoined(let client, let address):
            try container.encode(client, forKey: .client)
            try container.encode(address, forKey: .address)
        case .viewerSkipped(let client, let frames):
            try container.encode(client, forKey: .client)
            try container.encode(frames, forKey: .frames)
        case .viewerLeft(let client, let framesSent):
            try container.encode(client, forKey: .client)
            try container.encode(framesSent, forKey: .framesSent)
        case .sessionSetUp(let session, let path, let address, let transport):
            try container.encode(session, forKey: .session)
            try container.encode(path, forKey: .path)
            try container.encode(address, forKey: .address)
            try container.encode(transport, forKey: .transport)
        case .sessionPlaying(let session, let client):
            try container.encode(session, forKey: .session)
            try container.encode(client, forKey: .client)
        case .sessionRecording(let session):
            try container.encode(session, forKey: .session)
        case .sessionEnded(let session, let reason):
            try container.encode(session, forKey: .session)
            try container.encode(reason, forKey: .reason)
        }
    }

    /// How many events a server keeps for a reader that has not taken them (the oldest go
    /// first): a program that never reads ``Broadcaster/events`` costs at most this many.
    public static let bufferLimit = 1024

    /// A new stream of events and the continuation that feeds it, bounded by ``bufferLimit``.
    static func makeStream() -> (AsyncStream<ServerEvent>, AsyncStream<ServerEvent>.Continuation) {
        AsyncStream.makeStream(of: ServerEvent.self, bufferingPolicy: .bufferingNewest(bufferLimit))
    }
}
