/// How many outputs a session's `frames` asynchronous sequence holds for a consumer that has
/// not read them yet, and what happens when that many are waiting: the one buffering rule of
/// `EncoderSession.frames` and `DecoderSession.frames` (set by
/// `EncoderConfiguration.frameBuffering` and `DecoderConfiguration.frameBuffering`), both a
/// ``BoundedFrameStream``.
///
/// The sequence is bounded: a consumer that reads slowly, or never, costs at most `limit`
/// outputs of memory, never more. ``waitingForConsumer(_:)`` suspends the producer instead of
/// dropping; the other two drop, and every output dropped is counted by the session's
/// `droppedFrameCount`. A drop in a sequence of compressed frames (the encoder's) runs up to
/// the next keyframe, so its consumer never gets a frame whose references were dropped; see
/// ``BoundedFrameStream`` for the exact rule. The output handler is not affected: it sees every
/// output.
///
/// The corresponding Swift concurrency type is `AsyncStream.Continuation.BufferingPolicy`
/// (`bufferingNewest` / `bufferingOldest`), whose drops are one element at a time.
public enum OutputBufferingPolicy: Hashable, Sendable {
    /// Holds the newest `limit` outputs: when full, the oldest waiting output is dropped to make
    /// room (for compressed frames, the oldest waiting group of pictures). Right for live video,
    /// where a late consumer wants what is new.
    case keepingNewest(Int)
    /// Holds the oldest `limit` outputs: when full, a new output is dropped (for compressed
    /// frames, with every frame after it up to the next keyframe that finds room).
    case keepingOldest(Int)
    /// Holds `limit` outputs, then makes the producer wait until the consumer reads one:
    /// nothing is dropped. The session's queue waits for the consumer, so frames queue up in
    /// the session, and a producer that bounds the queue (`waitForQueuedFrames(downTo:)`, or its
    /// async twin) waits in turn. A consumer must keep reading (or the session be invalidated),
    /// and must not be the task that waits for the session's queue (`completeFrames()`) unless
    /// it reads concurrently.
    case waitingForConsumer(Int)

    /// The default: the newest 30 outputs (one second at 30 frames a second).
    public static let `default` = OutputBufferingPolicy.keepingNewest(30)

    /// The most outputs the sequence holds.
    public var limit: Int {
        switch self {
        case .keepingNewest(let limit), .keepingOldest(let limit), .waitingForConsumer(let limit): limit
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
