public import HEVC
public import Logging

/// Serves one H.264 or H.265 source to any number of viewers without re-encoding: a camera, a
/// publisher or a file (``RelaySource``) fed into a ``Broadcaster`` that keeps the current GOP
/// (``GOPKeeping``), so a viewer who joins starts at once from the last keyframe (an IDR, or an
/// H.265 IRAP picture) — a relay cannot ask its source for one — instead of waiting up to a GOP.
///
/// ```swift
/// let client = try await RTSPClient.open(url: "rtsp://camera.local/stream", group: group)
/// let relay = Relay()
/// let server = try await RTSPServer.start(host: "0.0.0.0", port: 8554, group: group)
/// try await relay.run(.camera(client)) { format in
///     server.mount("/live", broadcaster: relay.broadcaster, format: format)   // and again on a change
/// }
/// ```
///
/// Add an ``AnnexBFanOutServer`` on the same ``broadcaster`` for raw TCP viewers. The memory of
/// the kept GOP is bounded by ``GOPKeeping``; each viewer may have `queueLimit` frames in
/// flight before it is skipped to the next IDR (which, from a relay, may be a GOP away).
public final class Relay: Sendable {
    /// What ``run(_:onFormat:)`` and ``run(frames:onFormat:)`` relayed.
    public struct Outcome: Sendable, Equatable {
        /// Frames handed to the broadcaster.
        public var frames: Int
        /// True when the source ended by itself (a file without looping, the camera or the
        /// publisher gone); false when the task was cancelled.
        public var sourceEnded: Bool
    }

    /// The viewers' broadcaster, keeping the current GOP: mount it on an ``RTSPServer``, give it
    /// to an ``AnnexBFanOutServer``, and close its viewers (``Broadcaster/closeAll(flushing:flushTimeout:)``)
    /// when the relay is over.
    public let broadcaster: Broadcaster
    private let logger: Logger

    /// A relay whose broadcaster keeps GOPs within `keepingGOP`.
    ///
    /// - Parameters:
    ///   - keepingGOP: the bound on the kept GOP's bytes and frames.
    ///   - queueLimit: frames a viewer may have in flight before it is skipped to the next IDR;
    ///     nil: the kept frame limit and 60 more (a viewer starts with up to a GOP in flight).
    ///   - logger: gets the broadcaster's joins, leaves and skips, and each format change.
    public init(keepingGOP: GOPKeeping = .standard, queueLimit: Int? = nil, logger: Logger = .streamingSilent) {
        broadcaster = Broadcaster(queueLimit: queueLimit ?? keepingGOP.frameLimit + 60, keepingGOP: keepingGOP, logger: logger)
        self.logger = logger
    }

    /// Hands every frame of `source` (a ``RelaySource``, or any sequence of ``LiveFrame``s) to ``broadcaster`` until the source ends or the task is
    /// cancelled; `onFormat` is awaited before the first frame and before each frame whose
    /// format (its codec and parameter sets) differs from the previous one — where a server
    /// mounts the stream (its SDP) and mounts it again.
    ///
    /// - Parameters:
    ///   - source: the frames.
    ///   - onFormat: the stream's format, first and at each change.
    /// - Returns: how many frames were relayed, and whether the source ended.
    /// - Throws: what the source or `onFormat` threw.
    public func run<Source: AsyncSequence>(frames source: Source,
                                           onFormat: (VideoFormatDescription) async throws -> Void) async throws -> Outcome
    where Source.Element == LiveFrame {
        var format: VideoFormatDescription?
        var frames = 0
        for try await frame in source {
            if let video = frame.format, video != format {
                if format != nil { logger.info("the source's format changed") }
                format = video
                try await onFormat(video)
            }
            broadcaster.broadcast(frame)
            frames += 1
        }
        return Outcome(frames: frames, sourceEnded: !Task.isCancelled)
    }

    /// ``run(frames:onFormat:)`` for a ``RelaySource``: `relay.run(.camera(client)) { … }`.
    ///
    /// - Parameters:
    ///   - source: the camera, publisher or file.
    ///   - onFormat: the stream's format, first and at each change.
    /// - Returns: how many frames were relayed, and whether the source ended.
    /// - Throws: what the source or `onFormat` threw.
    public func run(_ source: RelaySource, onFormat: (VideoFormatDescription) async throws -> Void) async throws -> Outcome {
        try await run(frames: source, onFormat: onFormat)
    }
}
