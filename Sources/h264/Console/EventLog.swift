import Foundation
import H264Streaming

/// `--events FILE`: the servers' `ServerEvent`s (listening addresses, viewers, sessions) and
/// the RTSP client's `ReceiveEvent`s, one JSON object per line, to FILE (`-`: standard output) —
/// what scripts and tests read instead of the log lines on standard error. Without `--events`,
/// nothing is written or followed.
struct EventLog: Sendable {
    private let handle: FileHandle?

    init(path: String?) throws { handle = try path.map(CLIIO.openOutput) }

    /// Writes `event` as one line (one `write`, so lines from several followers never mix); a
    /// reader that went away costs the events, not the server.
    func write(_ event: ServerEvent) { writeLine(event) }

    /// Writes `event` of `h264 receive rtsp://…` as one line.
    func write(_ event: ReceiveEvent) { writeLine(event) }

    private func writeLine(_ event: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let handle, let json = try? encoder.encode(event) else { return }
        try? handle.write(contentsOf: json + Data("\n".utf8))
    }

    /// Writes each of `events` as it comes, until the sequence ends (await the task for the last).
    func follow(_ events: AsyncStream<ServerEvent>?) -> Task<Void, Never>? {
        guard handle != nil, let events else { return nil }
        return Task { for await event in events { write(event) } }
    }
}
