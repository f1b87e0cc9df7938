public import MediaCore

/// An output of a live stream that a program adds to a ``Broadcaster``: an RTMP publisher
/// (``RTMPPublisher``), an RTP/UDP sender (``RTPSender``), or a transport, recorder or
/// analyser of the program's own.
///
/// The broadcaster hands the sink a ``LiveFrameStream`` of its own — bounded by
/// ``LiveSinkLimits``, starting at a keyframe, cut back to the next keyframe if the sink falls
/// behind — and the sink reads it at its pace. A slow sink never slows the viewers or the
/// other sinks, and a sink that throws ends alone.
///
/// ```swift
/// struct FrameCounter: LiveSink {
///     let counted = Mutex(0)
///     func consume(_ frames: LiveFrameStream) async throws {
///         for await _ in frames { counted.withLock { $0 += 1 } }
///     }
/// }
/// try await broadcaster.run(FrameCounter())   // until the broadcaster closes, or cancellation
/// ```
///
/// RTSP and raw TCP viewers are attached by ``RTSPServer`` and ``AnnexBFanOutServer`` (their
/// connections write the frame's forms the broadcaster made once for all of them); a sink is
/// for what reads frames as values.
public protocol LiveSink: Sendable {
    /// Takes the stream's frames until they end (the broadcaster closed its viewers) or the task
    /// is cancelled; returns when done. What it throws ends this sink only.
    ///
    /// - Parameter frames: the stream's frames from a keyframe on, bounded.
    func consume(_ frames: LiveFrameStream) async throws
}

extension Broadcaster {
    /// A bounded sequence of the stream's frames for one reader, from a keyframe on: the kept
    /// GOP when the broadcaster keeps one, else the next keyframe (asked for from the encoder
    /// through `onKeyframeRequest`, as for a joining viewer).
    ///
    /// The reader is counted among the clients while it reads; it leaves when the sequence
    /// ends (``closeAll(flushing:flushTimeout:)``) or its task is cancelled.
    ///
    /// - Parameter limits: how far the reader may fall behind before it is cut back to the next keyframe.
    /// - Returns: the frames.
    public func frames(limits: LiveSinkLimits = .standard) -> LiveFrameStream {
        LiveFrameStream(subscription: subscribe(limits: limits))
    }

    /// Attaches `sink` and runs it until it returns: with the stream's frames from a keyframe on
    /// (see ``frames(limits:)``), until the broadcaster closes its viewers or the task is cancelled.
    ///
    /// - Parameters:
    ///   - sink: the output.
    ///   - limits: how far the sink may fall behind before it is cut back to the next keyframe.
    /// - Returns: how many frames the sink skipped, and how many times it fell behind.
    /// - Throws: what the sink threw.
    @discardableResult
    public func run(_ sink: some LiveSink, limits: LiveSinkLimits = .standard) async throws -> LiveSinkOutcome {
        let frames = frames(limits: limits)
        defer { frames.subscription.cancel() }
        try await sink.consume(frames)
        return LiveSinkOutcome(skippedFrames: frames.skippedFrames, skips: frames.skips)
    }

    /// Attaches `sink` now and runs it in a task of its own (``run(_:limits:)``): its frames
    /// start with the next broadcast (or the kept GOP). Await the task's value for the sink's
    /// outcome or error; cancel it to detach the sink.
    ///
    /// - Parameters:
    ///   - sink: the output.
    ///   - limits: how far the sink may fall behind before it is cut back to the next keyframe.
    /// - Returns: the sink's task.
    public func attach(_ sink: some LiveSink, limits: LiveSinkLimits = .standard) -> Task<LiveSinkOutcome, any Error> {
        let frames = frames(limits: limits)
        return Task {
            defer { frames.subscription.cancel() }
            try await sink.consume(frames)
            return LiveSinkOutcome(skippedFrames: frames.skippedFrames, skips: frames.skips)
        }
    }
}

/// What a ``LiveSink`` missed while it ran (``Broadcaster/run(_:limits:)``).
public struct LiveSinkOutcome: Sendable, Hashable {
    /// Frames it did not get: before its first keyframe, and dropped when it fell behind.
    public var skippedFrames: Int
    /// The times it fell behind and was cut back to the next keyframe.
    public var skips: Int
}
