/// How many outputs a session's `frames` asynchronous sequence holds for a consumer that has
/// not read them yet, and which ones it drops when that many are waiting: the one buffering
/// rule of `EncoderSession.frames` and `DecoderSession.frames` (set by
/// `EncoderConfiguration.frameBuffering` and `DecoderConfiguration.frameBuffering`).
///
/// The sequence is bounded: a consumer that reads slowly, or never, costs at most `limit`
/// outputs of memory, never more. Every output the sequence drops is counted by the session's
/// `droppedFrameCount`. The output handler is not affected: it sees every output. A producer
/// that must not lose outputs either reads them in the output handler, or reads the sequence
/// concurrently and keeps it below the limit (for example with the session's
/// `waitForQueued…(downTo:)` back-pressure), or chooses a limit that holds the whole stream.
///
/// The corresponding Swift concurrency type is `AsyncStream.Continuation.BufferingPolicy`
/// (`bufferingNewest` / `bufferingOldest`), which the sequence is built with.
public enum OutputBufferingPolicy: Hashable, Sendable {
    /// Holds the newest `limit` outputs: when full, the oldest waiting output is dropped to make
    /// room (`bufferingNewest`). Right for live video, where a late consumer wants what is new.
    case keepingNewest(Int)
    /// Holds the oldest `limit` outputs: when full, a new output is dropped (`bufferingOldest`).
    case keepingOldest(Int)

    /// The default: the newest 30 outputs (one second at 30 frames a second).
    public static let `default` = OutputBufferingPolicy.keepingNewest(30)

    /// The most outputs the sequence holds.
    public var limit: Int {
        switch self {
        case .keepingNewest(let limit), .keepingOldest(let limit): limit
        }
    }

    /// Checks the limit.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` (field `frameBuffering`) unless the limit
    ///   is in 1…100000.
    public func validate() throws(MediaError) {
        guard (1...100_000).contains(limit) else {
            throw MediaError(.invalidConfiguration, field: "frameBuffering", "a limit of \(limit) outputs: use 1…100000")
        }
    }
}
