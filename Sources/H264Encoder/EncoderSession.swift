public import H264
public import Logging
import Dispatch

/// A VideoToolbox-style H.264 compression session over libx264 — the counterpart of
/// `VTCompressionSession`.
///
/// ## Lifecycle
/// A session is a state machine, `created → configured → prepared → invalidated`, with every
/// transition in one value (`EncoderLifecycle`, applied under the session's lock) and every
/// illegal call a thrown `H264Error` (never a crash):
/// - ``init(width:height:configuration:logger:outputHandler:)`` validates and allocates nothing
///   of x264 (cheap);
/// - ``configure(_:)`` changes any property until the session is prepared;
/// - ``prepare()`` opens x264 and computes SPS, PPS and the `FormatDescription` before the
///   first frame (``encode(_:presentationTimeStamp:duration:forceKeyframe:)`` prepares
///   implicitly); when x264 cannot open, the session stays as it was, configurable;
/// - ``invalidate()`` ends the session: idempotent, from any thread, at any time.
///
/// ## Threading: why encode does not wait
/// `encode` is asynchronous, like VideoToolbox's: it checks the frame and the state, queues the
/// frame on the session's serial encoding queue and returns. A capture thread therefore never
/// waits for x264 (which takes milliseconds per frame and may run lookahead threads). This is
/// safe without copying pixels because a ``VideoFrame`` owns its planes (`[UInt8]` storage is
/// retained by the queued frame); x264 reads them in place when the queue reaches the frame.
/// The queue is the only place x264 runs for frames, so outputs arrive in decode order from one
/// serial context, and the x264 handle needs only one uncontended mutex (shared with
/// ``prepare()`` and ``prewarm(width:height:)``, which may open it on the caller's thread).
/// ``completeFrames()`` and ``waitForQueuedFrames()`` wait for the queue; ``invalidate()`` never
/// waits (x264 is closed by a job on the queue).
///
/// The queue is not bounded by itself: a capture source is paced by its camera and real-time
/// presets keep x264 ahead of it, while a producer that reads faster than x264 encodes (a file,
/// a decoder) bounds it with ``waitForQueuedFrames(downTo:)`` before each frame.
///
/// ## Output
/// The output handler runs on the encoding queue for every access unit. Output produced after
/// the session was invalidated (releasing the last reference invalidates it) is dropped: the
/// queue reads the one invalidated flag before each frame and each delivery. ``frames``
/// offers the same outputs as an `AsyncStream`.
/// Errors x264 reports while encoding queued frames are thrown by the next `encode` or
/// ``completeFrames()``.
public final class EncoderSession: Sendable {
    /// The session's lifecycle state.
    public enum State: String, Hashable, Sendable {
        /// Created with a valid configuration; nothing of x264 exists yet.
        case created
        /// The configuration was changed after creation; still no x264 encoder.
        case configured
        /// x264 is open (or will be opened by the first queued frame); the configuration is
        /// fixed except for the live rate settings.
        case prepared
        /// ``EncoderSession/invalidate()`` was called: every further call throws.
        case invalidated
    }

    /// Receives every encoded access unit, in decode order, on the session's encoding queue.
    public typealias OutputHandler = @Sendable (EncodedFrame) -> Void

    /// What the session and its encoding queue share, under the session's one lock.
    private var shared: Locked<SessionCore.Shared> { core.shared }
    /// Shared with the jobs on the encoding queue, which never hold the session itself (so the
    /// last release of the session runs `deinit`, which invalidates).
    private let core: SessionCore
    /// The serial encoding queue (internal for tests, which wait on it after a release).
    let queue: DispatchQueue
    private let logger: Logger
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    /// Frames accepted by `encode`, oldest first; each submission of ``encodeNext`` to the
    /// queue encodes one. Submitting one stored block (not a new closure per frame) keeps
    /// `encode` free of heap allocations.
    private let pendingFrames: Locked<PendingQueue<FrameJob>>
    private let encodeNext: @convention(block) @Sendable () -> Void

    /// Creates a session for frames of `width` × `height`. Cheap: x264 is opened by
    /// ``prepare()`` or the first frame.
    ///
    /// - Parameters:
    ///   - width: the frame width in pixels, even and 2…16384.
    ///   - height: the frame height in pixels, even and 2…16384.
    ///   - configuration: the encoder properties (validated here).
    ///   - logger: where x264's log lines go (x264's level follows the logger's `logLevel`).
    ///   - outputHandler: called with every encoded frame on the encoding queue.
    /// - Throws: `H264Error.Code.invalidFrame` for a bad size,
    ///   `H264Error.Code.invalidConfiguration` naming the first invalid property.
    public init(width: Int, height: Int, configuration: EncoderConfiguration = EncoderConfiguration(),
                logger: Logger = EncoderSession.defaultLogger, outputHandler: OutputHandler? = nil) throws(H264Error) {
        try Self.validateSize(width: width, height: height)
        try configuration.validate()
        let core = SessionCore(configuration: configuration, width: width, height: height, handler: outputHandler)
        self.core = core
        queue = DispatchQueue(label: "H264Encoder.EncoderSession")
        self.logger = logger
        let pending = Locked(PendingQueue<FrameJob>())
        pendingFrames = pending
        encodeNext = {
            var next = pending.withLock { $0.popFirst() }
            if let job = next, !core.isInvalidated {
                do {
                    if let encoded = try job.lane.encode(job.frame, presentationTimeStamp: job.presentationTimeStamp,
                                                         duration: job.duration, forceKeyframe: job.forceKeyframe) {
                        core.deliver(encoded)
                    }
                } catch {
                    core.record(error)
                }
            }
            // The frame is released (x264 copied its pixels) before the count falls: a producer
            // woken by waitForQueuedFrames(downTo:) may then write into its buffer in place.
            next = nil
            pending.withLockWakingWaiters { $0.finishOne() }
        }
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(core))
    }

    deinit {
        invalidate()
    }

    /// The logger sessions use unless given one: label `H264Encoder`, level `warning` (x264's
    /// warnings and errors; its per-session statistics are `info`).
    public static var defaultLogger: Logger {
        var logger = Logger(label: "H264Encoder")
        logger.logLevel = .warning
        return logger
    }

    static func validateSize(width: Int, height: Int) throws(H264Error) {
        guard (2...16_384).contains(width), (2...16_384).contains(height), width % 2 == 0, height % 2 == 0 else {
            throw H264Error(.invalidFrame, field: "size", "\(width)×\(height): width and height must be even and in 2…16384")
        }
    }

    /// The lifecycle state.
    public var state: State { shared.withLock { $0.lifecycle.state } }

    /// The configuration in force (including live rate changes).
    public var configuration: EncoderConfiguration { shared.withLock { $0.configuration } }

    /// The size of the frames the session currently encodes.
    public var size: (width: Int, height: Int) { shared.withLock { ($0.width, $0.height) } }

    /// The encoded frames as an asynchronous sequence, in decode order. It yields the frames
    /// produced after its first access and finishes when the session is invalidated (at once
    /// when it is first read after ``invalidate()``).
    public var frames: AsyncStream<EncodedFrame> {
        shared.withLock { s in
            if let stream = s.stream { return stream }
            let (stream, continuation) = AsyncStream<EncodedFrame>.makeStream()
            s.stream = stream
            if s.lifecycle.isInvalidated {
                continuation.finish()
            } else {
                s.continuation = continuation
            }
            return stream
        }
    }

    /// Changes properties before the session is prepared.
    ///
    /// ```swift
    /// try session.configure { $0.averageBitRate = 2_000_000; $0.maxKeyFrameIntervalDuration = 1 }
    /// ```
    /// - Throws: `H264Error.Code.invalidConfiguration` naming an invalid property (the
    ///   configuration is then unchanged); `H264Error.Code.invalidState` once prepared (or
    ///   while ``prepare()`` opens x264) or invalidated.
    public func configure(_ change: (inout EncoderConfiguration) -> Void) throws(H264Error) {
        try shared.withLock { (s) throws(H264Error) in
            var lifecycle = s.lifecycle
            try lifecycle.apply(.configure)
            var updated = s.configuration
            change(&updated)
            try updated.validate()
            s.configuration = updated
            s.lifecycle = lifecycle
        }
    }

    /// Opens x264 and computes the parameter sets ahead of the first frame (VideoToolbox's
    /// `VTCompressionSessionPrepareToEncodeFrames`). Calling it again returns the same format.
    ///
    /// - Returns: the format description (SPS, PPS, avcC) the first frames will carry.
    /// - Throws: `H264Error.Code.invalidState` after invalidate;
    ///   `H264Error.Code.encoderFailed` or `H264Error.Code.invalidConfiguration` when x264
    ///   cannot open (the session is then as it was before the call, and can be configured).
    @discardableResult
    public func prepare() throws(H264Error) -> FormatDescription {
        let lane = try shared.withLock { (s) throws(H264Error) -> Lane in
            try s.lifecycle.apply(.prepare)
            if let lane = s.current { return lane }
            let lane = Lane(width: s.width, height: s.height, configuration: s.configuration, logger: logger)
            s.current = lane
            return lane
        }
        let format: FormatDescription
        do {
            format = try lane.open()
        } catch {
            shared.withLock { s in
                _ = try? s.lifecycle.apply(.prepareFailed)
                // The lane was made for a configuration x264 refused: a later prepare or frame
                // makes a new one (unless a frame was already queued on it).
                if s.lifecycle.state != .prepared, s.current === lane { s.current = nil }
            }
            throw error
        }
        do {
            try shared.withLock { (s) throws(H264Error) in _ = try s.lifecycle.apply(.prepared) }
        } catch {
            lane.close()   // invalidated while x264 opened
            throw error
        }
        return format
    }

    /// The format description of the current encoder, once prepared (`nil` before).
    public var formatDescription: FormatDescription? {
        shared.withLock { $0.current }?.openFormatDescription
    }

    /// Queues a frame for encoding and returns without waiting for x264.
    ///
    /// A frame of another size than the session's switches to a prewarmed session of that size
    /// (``prewarm(width:height:)``) or, with none, starts a new encoder: either way the frame is
    /// encoded as an IDR with new parameter sets; no frame is lost.
    ///
    /// - Parameters:
    ///   - frame: the picture (its planes are read in place when the queue reaches it).
    ///   - presentationTimeStamp: when the frame is shown; increasing frame to frame.
    ///   - duration: how long it is shown (copied to the output).
    ///   - forceKeyframe: encode this very frame as an IDR (a viewer joined, a packet was lost).
    ///     The corresponding x264 field is `x264_picture_t.i_type = X264_TYPE_IDR`.
    /// - Throws: `H264Error.Code.invalidState` after ``invalidate()``;
    ///   `H264Error.Code.invalidTimestamp` when `presentationTimeStamp` is not later than
    ///   the previous frame's; an error x264 reported for an earlier queued frame.
    public func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration = .zero,
                       forceKeyframe: Bool = false) throws(H264Error) {
        try shared.withLock { (s) throws(H264Error) in
            var lifecycle = s.lifecycle
            try lifecycle.apply(.encode("encode"))
            if let last = s.lastPresentationTimeStamp, presentationTimeStamp <= last {
                throw H264Error(.invalidTimestamp, field: "presentationTimeStamp",
                                "\(presentationTimeStamp) is not after the previous frame's \(last)")
            }
            if let error = s.takeError() { throw error }
            s.lifecycle = lifecycle
            s.lastPresentationTimeStamp = presentationTimeStamp
            if s.current == nil || s.current!.width != frame.width || s.current!.height != frame.height {
                let next: Lane
                if let pre = s.prewarmed, pre.width == frame.width, pre.height == frame.height {
                    next = pre
                    s.prewarmed = nil
                } else {
                    next = Lane(width: frame.width, height: frame.height, configuration: s.configuration, logger: logger)
                }
                if let old = s.current { enqueueRetire(old) }
                s.current = next
                s.width = frame.width
                s.height = frame.height
            }
            let lane = s.current!
            // Enqueued under the lock: queue order is the order frames were accepted, and the
            // n-th run of encodeNext takes the n-th pending frame.
            pendingFrames.withLock {
                $0.append(FrameJob(lane: lane, frame: frame, presentationTimeStamp: presentationTimeStamp,
                                   duration: duration, forceKeyframe: forceKeyframe))
            }
            queue.async(execute: encodeNext)
        }
    }

    /// Delivers every pending output — queued frames, x264's lookahead, B-frames and frame
    /// threads — and returns after the last was delivered (VideoToolbox's
    /// `VTCompressionSessionCompleteFrames`). x264 cannot continue after a flush, so the next
    /// frame starts a fresh encoder with an IDR (same parameter sets for the same settings).
    ///
    /// - Throws: `H264Error.Code.invalidState` after invalidate or from inside the
    ///   output handler (it would wait for itself); an error x264 reported while encoding.
    public func completeFrames() throws(H264Error) {
        guard !isOnEncodingQueue else {
            throw H264Error(.invalidState, "completeFrames cannot be called from the output handler")
        }
        let lane = try shared.withLock { (s) throws(H264Error) -> Lane? in
            try s.lifecycle.apply(.use("completeFrames"))
            return s.current
        }
        let core = self.core
        queue.sync {
            guard let lane, !core.isInvalidated else { return }
            do {
                for encoded in try lane.flush() { core.deliver(encoded) }
            } catch {
                core.record(error)
            }
        }
        if let error = shared.withLock({ $0.takeError() }) { throw error }
    }

    /// Ends the session (VideoToolbox's `VTCompressionSessionInvalidate`): frames not yet
    /// encoded are dropped, no output handler call starts afterwards, ``frames`` finishes, and
    /// x264 is closed on the encoding queue once a frame in progress is done. Idempotent; safe
    /// from any thread, any number of times, during an encode and from the output handler.
    public func invalidate() {
        let (lanes, continuation) = shared.withLock { s -> ([Lane], AsyncStream<EncodedFrame>.Continuation?) in
            guard !s.lifecycle.isInvalidated else { return ([], nil) }
            _ = try? s.lifecycle.apply(.invalidate)
            defer { s.current = nil; s.prewarmed = nil; s.continuation = nil }
            return ([s.current, s.prewarmed].compactMap { $0 }, s.continuation)
        }
        continuation?.finish()
        for lane in lanes {
            queue.async { lane.close() }
        }
    }

    /// Changes the average bit rate live — no new session, no extra IDR (VideoToolbox sets
    /// `AverageBitRate` on a running session). Before prepare it simply configures.
    /// The corresponding x264 call is `x264_encoder_reconfig`.
    ///
    /// - Throws: `H264Error.Code.invalidConfiguration` for a rate outside
    ///   1000…1000000000 or in constant-quality mode; `H264Error.Code.invalidState`
    ///   after invalidate.
    public func setAverageBitRate(_ bitsPerSecond: Int) throws(H264Error) {
        try changeLive { (c) throws(H264Error) in
            guard c.constantRateFactor == nil else {
                throw H264Error(.invalidConfiguration, field: "averageBitRate", "the session encodes at constant quality (constantRateFactor)")
            }
            c.averageBitRate = bitsPerSecond
        }
    }

    /// Changes the data-rate limits (VBV) live, without a new IDR.
    /// The corresponding x264 call is `x264_encoder_reconfig`.
    ///
    /// - Throws: `H264Error.Code.invalidConfiguration` naming a bad limit;
    ///   `H264Error.Code.invalidState` after invalidate.
    public func setDataRateLimits(_ limits: [EncoderConfiguration.DataRateLimit]) throws(H264Error) {
        try changeLive { (c) throws(H264Error) in c.dataRateLimits = limits }
    }

    private func changeLive(_ change: (inout EncoderConfiguration) throws(H264Error) -> Void) throws(H264Error) {
        try shared.withLock { (s) throws(H264Error) in
            try s.lifecycle.apply(.use("rate change"))
            var updated = s.configuration
            try change(&updated)
            try updated.validate()
            s.configuration = updated
            for lane in [s.current, s.prewarmed].compactMap({ $0 }) {
                let core = self.core
                queue.async { [updated] in
                    do { try lane.reconfigure(updated) } catch { core.record(error) }
                }
            }
        }
    }

    /// Prepares a second encoder for an anticipated size change (x264 opening costs real time:
    /// do it here, off the capture path). Replaces an earlier prewarmed encoder.
    ///
    /// - Throws: `H264Error.Code.invalidFrame` for a bad size;
    ///   `H264Error.Code.invalidState` after invalidate;
    ///   `H264Error.Code.encoderFailed` when x264 cannot open.
    public func prewarm(width: Int, height: Int) throws(H264Error) {
        try Self.validateSize(width: width, height: height)
        let configuration = try shared.withLock { (s) throws(H264Error) -> EncoderConfiguration in
            try s.lifecycle.apply(.use("prewarm"))
            return s.configuration
        }
        let lane = Lane(width: width, height: height, configuration: configuration, logger: logger)
        _ = try lane.open()
        let replaced: Lane? = shared.withLock { s in
            guard !s.lifecycle.isInvalidated else { return lane }
            let old = s.prewarmed
            s.prewarmed = lane
            return old
        }
        if let replaced { queue.async { replaced.close() } }
    }

    /// Switches atomically to the prewarmed encoder: frames accepted before this call finish
    /// on the old encoder (its delayed outputs are delivered first, then it is closed); the next
    /// frame is the new encoder's first output, an IDR with the new SPS, PPS and format
    /// description. Frames must then have the prewarmed size.
    ///
    /// - Throws: `H264Error.Code.invalidState` when nothing is prewarmed or after
    ///   invalidate.
    public func switchToPrewarmedSession() throws(H264Error) {
        try shared.withLock { (s) throws(H264Error) in
            var lifecycle = s.lifecycle
            try lifecycle.apply(.encode("switch"))
            guard let next = s.prewarmed else {
                throw H264Error(.invalidState, "no prewarmed session: call prewarm(width:height:) first")
            }
            if let old = s.current { enqueueRetire(old) }
            s.current = next
            s.prewarmed = nil
            s.width = next.width
            s.height = next.height
            s.lifecycle = lifecycle
        }
    }

    /// Queues the flush of `lane`'s delayed frames (delivered in order) and its closing.
    private func enqueueRetire(_ lane: Lane) {
        let core = self.core
        queue.async {
            guard !core.isInvalidated else { lane.close(); return }
            do {
                for encoded in try lane.flush() { core.deliver(encoded) }
            } catch {
                core.record(error)
            }
            lane.close()
        }
    }

    /// Blocks until every frame accepted so far has been handed to x264 (without flushing
    /// x264's own delay): back-pressure for producers that read faster than x264 encodes, such
    /// as a file transcoder, so queued frames do not pile up in memory. Capture code should not
    /// call it.
    ///
    /// - Throws: `H264Error.Code.invalidState` from inside the output handler.
    public func waitForQueuedFrames() throws(H264Error) {
        guard !isOnEncodingQueue else {
            throw H264Error(.invalidState, "waitForQueuedFrames cannot be called from the output handler")
        }
        queue.sync {}
    }

    /// Blocks until at most `count` of the frames accepted by ``encode(_:presentationTimeStamp:duration:forceKeyframe:)``
    /// are still waiting to be handed to x264, the one being handed over included: bounded
    /// back-pressure for a producer that reads faster than x264 encodes (a file, a decoder). The
    /// encoder keeps `count` frames in hand, so it never waits for the producer, while the
    /// producer never gets more than `count` frames ahead.
    ///
    /// A frame handed to x264 is released at once (x264 keeps its own copy of the pixels), so
    /// after this returns, the buffers of all but the last `count` frames passed to `encode` are
    /// the caller's alone again: an array behind one can be refilled in place, without a copy.
    /// ``waitForQueuedFrames()`` waits for every frame (and for a pending flush or switch).
    ///
    /// - Parameter count: how many frames may still be waiting; a negative count is taken as 0.
    /// - Throws: `H264Error.Code.invalidState` from inside the output handler (it would
    ///   wait for itself).
    public func waitForQueuedFrames(downTo count: Int) throws(H264Error) {
        guard !isOnEncodingQueue else {
            throw H264Error(.invalidState, "waitForQueuedFrames cannot be called from the output handler")
        }
        let limit = max(count, 0)
        pendingFrames.wait { $0.unfinished <= limit }
    }

    /// Waits until every queued job has run (tests).
    func waitForQueue() {
        queue.sync {}
    }

    /// True on this session's encoding queue (in its output handler), where waiting for the
    /// queue would wait for itself.
    private var isOnEncodingQueue: Bool {
        DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(core)
    }
}

/// A frame accepted by `encode`, waiting for the encoding queue.
private struct FrameJob: Sendable {
    let lane: Lane
    let frame: VideoFrame
    let presentationTimeStamp: Duration
    let duration: Duration
    let forceKeyframe: Bool
}

/// The session's state behind its one lock, shared with the jobs on the encoding queue: the
/// lifecycle (whose invalidated flag every part reads), the encoders, the asynchronous error
/// slot and the `frames` continuation.
final class SessionCore: Sendable {
    struct Shared: Sendable {
        var lifecycle = EncoderLifecycle()
        var configuration: EncoderConfiguration
        var width: Int
        var height: Int
        var current: Lane?
        var prewarmed: Lane?
        var continuation: AsyncStream<EncodedFrame>.Continuation?
        var stream: AsyncStream<EncodedFrame>?
        /// The last accepted frame's presentation time stamp: the next must be later.
        var lastPresentationTimeStamp: Duration?
        /// The first error x264 reported on the encoding queue, until a call throws it.
        var error: H264Error?

        mutating func takeError() -> H264Error? {
            defer { error = nil }
            return error
        }
    }

    let shared: Locked<Shared>
    private let handler: EncoderSession.OutputHandler?

    init(configuration: EncoderConfiguration, width: Int, height: Int, handler: EncoderSession.OutputHandler?) {
        shared = Locked(Shared(configuration: configuration, width: width, height: height))
        self.handler = handler
    }

    /// The session's one invalidated flag.
    var isInvalidated: Bool { shared.withLock { $0.lifecycle.isInvalidated } }

    /// Hands `frame` to the output handler and the `frames` stream, unless invalidated.
    func deliver(_ frame: EncodedFrame) {
        let (invalidated, continuation) = shared.withLock { ($0.lifecycle.isInvalidated, $0.continuation) }
        guard !invalidated else { return }
        handler?(frame)
        continuation?.yield(frame)
    }

    /// Keeps the first error of the encoding queue for the next call to throw.
    func record(_ error: any Error) {
        let h264 = error as? H264Error ?? H264Error(.encoderFailed, "\(error)")
        shared.withLock { if $0.error == nil { $0.error = h264 } }
    }
}

/// One x264 encoder for one size, opened lazily and guarded by a mutex (x264 gives no
/// thread-safety for a handle). Used by the encoding queue, and by `prepare`/`prewarm` on the
/// caller's thread before any frame reaches it.
final class Lane: Sendable {
    let width: Int
    let height: Int
    private let configuration: Locked<EncoderConfiguration>
    private let logger: Logger
    /// The x264 encoder, used only inside this lock (opened again after a flush).
    private let encoder = Locked<X264Encoder?>(nil)
    private let cachedFormat = Locked<FormatDescription?>(nil)

    init(width: Int, height: Int, configuration: EncoderConfiguration, logger: Logger) {
        self.width = width
        self.height = height
        self.configuration = Locked(configuration)
        self.logger = logger
    }

    var openFormatDescription: FormatDescription? { cachedFormat.withLock { $0 } }

    private func withEncoder<R>(_ body: (X264Encoder) throws(H264Error) -> R) throws(H264Error) -> R {
        try encoder.withLock { (slot) throws(H264Error) -> R in
            if slot == nil {
                let opened = try X264Encoder(width: width, height: height,
                                             configuration: configuration.withLock { $0 }, logger: logger)
                cachedFormat.withLock { $0 = opened.formatDescription }
                slot = opened
            }
            return try body(slot!)
        }
    }

    /// Opens x264 if needed; returns the format description.
    func open() throws(H264Error) -> FormatDescription {
        try withEncoder { $0.formatDescription }
    }

    func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws(H264Error) -> EncodedFrame? {
        try withEncoder { (e) throws(H264Error) in
            try e.encode(frame, presentationTimeStamp: presentationTimeStamp, duration: duration, forceKeyframe: forceKeyframe)
        }
    }

    /// Drains x264 and closes it; a later frame reopens a fresh encoder.
    func flush() throws(H264Error) -> [EncodedFrame] {
        try encoder.withLock { (slot) throws(H264Error) -> [EncodedFrame] in
            guard let open = slot else { return [] }
            slot = nil
            return try open.flushAndClose()
        }
    }

    func reconfigure(_ c: EncoderConfiguration) throws(H264Error) {
        configuration.withLock { $0 = c }
        try encoder.withLock { (slot) throws(H264Error) in
            try slot?.reconfigure(c)
        }
    }

    /// Closes x264 (idempotent). The session calls it only for a lane it no longer uses (retired,
    /// replaced or invalidated): the queue's frame jobs read the session's invalidated flag
    /// before they reach a lane, so none opens a closed lane again.
    func close() {
        encoder.withLock { slot in
            slot?.close()
            slot = nil
        }
    }
}
