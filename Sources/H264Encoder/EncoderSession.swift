public import H264
public import HEVC
public import Logging
package import H264SessionCore

/// A VideoToolbox-style compression session — the counterpart of `VTCompressionSession` —
/// encoding H.264 with libx264 or, when ``EncoderConfiguration/codec`` is `.hevc`, H.265 with
/// libx265 (the package trait `HEVCEncoding`). Everything below holds for both codecs; "x264"
/// stands for the codec's library.
///
/// ## Lifecycle
/// A session is a state machine, `created → configured → prepared → invalidated` — the one
/// lifecycle of both sessions (`DecoderSession` calls `prepared` `decoding`), applied under
/// the session's lock — and every illegal call throws `MediaError.Code.invalidState` (never a
/// crash), with the same wording on both sessions ("encode after invalidate"):
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
/// The output handler runs on the encoding queue for every access unit; a throwing one
/// (``init(width:height:configuration:logger:throwingOutputHandler:)``) ends the output with
/// its first error, which every later call throws. ``frames`` offers the same outputs as a
/// `BoundedFrameStream` that holds at most ``EncoderConfiguration/frameBuffering`` of them for
/// its consumer and drops, when it must, up to the next keyframe (drops are counted in
/// ``droppedFrameCount``). The rule for output
/// after the end, the same on both sessions: once ``invalidate()`` was called — releasing the
/// last reference calls it — no output handler call and no `frames` element starts (one already
/// running finishes), `frames` finishes, and queued frames are not encoded.
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
    /// Receives every encoded access unit, in decode order, on the session's encoding queue;
    /// an error it throws ends the session's output
    /// (``init(width:height:configuration:logger:throwingOutputHandler:)``).
    public typealias ThrowingOutputHandler = @Sendable (EncodedFrame) throws -> Void

    /// The session's state, under its one lock.
    package let shared: Locked<EncoderSessionState>
    /// The output handler, `frames` and the encoding queue's error slot. Shared with the jobs on
    /// the queue, which never hold the session itself (so the last release of the session runs
    /// `deinit`, which invalidates).
    package let sink: OutputSink<EncodedFrame>
    /// The serial encoding queue and its frames (internal for tests, which wait on it).
    package let jobs: JobQueue<FrameJob>
    let logger: Logger

    /// Creates a session for frames of `width` × `height`. Cheap: x264 is opened by
    /// ``prepare()`` or the first frame (VideoToolbox's `VTCompressionSessionCreate`).
    ///
    /// - Parameters:
    ///   - width: the frame width in pixels, even and 2…16384.
    ///   - height: the frame height in pixels, even and 2…16384.
    ///   - configuration: the encoder properties (validated here).
    ///   - logger: where x264's log lines go (x264's level follows the logger's `logLevel`).
    ///   - outputHandler: called with every encoded frame on the encoding queue.
    /// - Throws: `MediaError.Code.invalidFrame` for a bad size,
    ///   `MediaError.Code.invalidConfiguration` naming the first invalid property.
    public convenience init(width: Int, height: Int, configuration: EncoderConfiguration = EncoderConfiguration(),
                            logger: Logger = EncoderSession.defaultLogger, outputHandler: OutputHandler? = nil) throws(MediaError) {
        try self.init(width: width, height: height, configuration: configuration, logger: logger, handler: outputHandler)
    }

    /// Creates a session whose output handler may throw: the first error it throws ends the
    /// session's output — no handler call and no ``frames`` element starts afterwards, and
    /// ``frames`` finishes — and every later call that feeds or waits for the session
    /// (`encode`, ``completeFrames()``, the waits) throws `MediaError.Code.outputHandlerFailed`
    /// with the error's description; ``outputHandlerError`` is the error itself. Frames still
    /// queued are encoded but go nowhere; ``invalidate()`` ends the session.
    ///
    /// ```swift
    /// let session = try EncoderSession(width: 1280, height: 720, throwingOutputHandler: { frame in
    ///     try file.write(contentsOf: frame.data)   // a full disk ends the output
    /// })
    /// ```
    ///
    /// - Parameters:
    ///   - width: the frame width in pixels, even and 2…16384.
    ///   - height: the frame height in pixels, even and 2…16384.
    ///   - configuration: the encoder properties (validated here).
    ///   - logger: where x264's log lines go.
    ///   - throwingOutputHandler: called with every encoded frame on the encoding queue.
    /// - Throws: `MediaError.Code.invalidFrame` for a bad size,
    ///   `MediaError.Code.invalidConfiguration` naming the first invalid property.
    public convenience init(width: Int, height: Int, configuration: EncoderConfiguration = EncoderConfiguration(),
                            logger: Logger = EncoderSession.defaultLogger,
                            throwingOutputHandler: @escaping ThrowingOutputHandler) throws(MediaError) {
        try self.init(width: width, height: height, configuration: configuration, logger: logger, handler: throwingOutputHandler)
    }

    /// The one initializer behind the public ones.
    init(width: Int, height: Int, configuration: EncoderConfiguration, logger: Logger,
         handler: ThrowingOutputHandler?) throws(MediaError) {
        try Self.validateSize(width: width, height: height)
        try configuration.validate()
        shared = Locked(EncoderSessionState(configuration: configuration, width: width, height: height))
        let sink = OutputSink<EncodedFrame>(handler: handler, isKeyframe: { $0.isKeyframe }, failureCode: .encoderFailed)
        self.sink = sink
        self.logger = logger
        // The job queue releases the frame (x264 copied its pixels) before its count falls: a
        // producer woken by waitForQueuedFrames(downTo:) may then write into its buffer in place.
        jobs = JobQueue(label: "H264Encoder.EncoderSession") { job in
            sink.run {
                if let encoded = try job.lane.encode(job.frame, presentationTimeStamp: job.presentationTimeStamp,
                                                     duration: job.duration, forceKeyframe: job.forceKeyframe) {
                    sink.deliver(encoded)
                }
            }
        }
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

    static func validateSize(width: Int, height: Int) throws(MediaError) {
        guard (2...16_384).contains(width), (2...16_384).contains(height), width % 2 == 0, height % 2 == 0 else {
            throw MediaError(.invalidFrame, field: "size", "\(width)×\(height): width and height must be even and in 2…16384")
        }
    }

    /// The lifecycle state.
    public var state: State { State(lifecycleState) }

    /// The configuration in force (including live rate changes).
    public var configuration: EncoderConfiguration { sharedConfiguration }

    /// The size of the frames the session currently encodes.
    public var size: (width: Int, height: Int) { shared.withLock { ($0.width, $0.height) } }

    /// The encoded frames as an asynchronous sequence, in decode order. It yields the frames
    /// produced after its first access, holds at most ``EncoderConfiguration/frameBuffering``
    /// of them for a consumer that has not read them (the policy in force at the first access),
    /// and finishes when the session is invalidated (at once when it is first read after
    /// ``invalidate()``) or its throwing output handler threw.
    ///
    /// It never hands out a broken group of pictures: with `.waitingForConsumer` the encoding
    /// queue waits for the consumer; otherwise a frame that finds the buffer full is dropped
    /// with every frame up to the next keyframe (or, with `.keepingNewest`, the oldest waiting
    /// group of pictures makes room), and each frame dropped is counted in
    /// ``droppedFrameCount`` — see `BoundedFrameStream`.
    public var frames: BoundedFrameStream<EncodedFrame> { outputStream }

    /// How many encoded frames ``frames`` dropped because its buffer was full (its consumer
    /// read too slowly or not at all), each drop running up to a keyframe. The output handler
    /// saw them all.
    public var droppedFrameCount: Int { sink.droppedCount }

    /// The error the throwing output handler threw, once it threw (the session's output has
    /// ended); nil otherwise.
    public var outputHandlerError: (any Error)? { sink.outputHandlerError }

    /// Changes properties before the session is prepared.
    ///
    /// ```swift
    /// try session.configure { $0.averageBitRate = 2_000_000; $0.maxKeyFrameIntervalDuration = 1 }
    /// ```
    /// - Throws: `MediaError.Code.invalidConfiguration` naming an invalid property (the
    ///   configuration is then unchanged); `MediaError.Code.invalidState` once prepared (or
    ///   while ``prepare()`` opens x264) or invalidated.
    public func configure(_ change: (inout EncoderConfiguration) -> Void) throws(MediaError) {
        try applyConfiguration(change)
    }

    /// Opens the encoder and computes the parameter sets ahead of the first frame (VideoToolbox's
    /// `VTCompressionSessionPrepareToEncodeFrames`). Calling it again returns the same format.
    /// The corresponding x264 calls are `x264_encoder_open` and `x264_encoder_headers`; the
    /// x265 calls `x265_encoder_open` and `x265_encoder_headers`.
    ///
    /// - Returns: the format the first frames will carry: H.264's SPS, PPS and `avcC`, or
    ///   H.265's VPS, SPS, PPS and `hvcC`.
    /// - Throws: `MediaError.Code.invalidState` after invalidate;
    ///   `MediaError.Code.encoderFailed` or `MediaError.Code.invalidConfiguration` when x264
    ///   cannot open (the session is then as it was before the call, and can be configured).
    @discardableResult
    public func prepare() throws(MediaError) -> VideoFormatDescription {
        let lane = try shared.withLock { (s) throws(MediaError) -> Lane in
            try s.lifecycle.apply(.prepare)
            if let lane = s.current { return lane }
            let lane = Lane(width: s.width, height: s.height, configuration: s.configuration, logger: logger)
            s.current = lane
            return lane
        }
        let format: VideoFormatDescription
        do {
            format = try lane.open()
        } catch {
            shared.withLock { s in
                _ = try? s.lifecycle.apply(.prepareFailed)
                // The lane was made for a configuration x264 refused: a later prepare or frame
                // makes a new one (unless a frame was already queued on it).
                if s.lifecycle.state != .running, s.current === lane { s.current = nil }
            }
            throw error
        }
        do {
            try shared.withLock { (s) throws(MediaError) in _ = try s.lifecycle.apply(.prepared) }
        } catch {
            lane.close()   // invalidated while x264 opened
            throw error
        }
        return format
    }

    /// The format description (SPS, PPS, avcC) of the compressed stream the session works on
    /// now — the same meaning as `DecoderSession.formatDescription`: the parameter sets the
    /// frames most recently accepted are coded with. Here, those of the current x264 encoder:
    /// `nil` until it is open (``prepare()``, or the first frame on the encoding queue), and
    /// again after a size change until the new encoder is open; every ``EncodedFrame`` carries
    /// its own. `nil` for an H.265 session: ``format`` has either codec's.
    public var formatDescription: FormatDescription? { format?.h264 }

    /// The format of the compressed stream the session works on now, of either codec (as
    /// ``formatDescription``, which is H.264's only): `nil` until the encoder is open.
    public var format: VideoFormatDescription? {
        shared.withLock { $0.current }?.openFormat
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
    ///     The corresponding x264 field is `x264_picture_t.i_type = X264_TYPE_IDR`; the x265
    ///     field `x265_picture.sliceType = X265_TYPE_IDR`.
    /// - Throws: `MediaError.Code.invalidState` after ``invalidate()``;
    ///   `MediaError.Code.invalidTimestamp` when `presentationTimeStamp` is not later than
    ///   the previous frame's; an error x264 reported for an earlier queued frame.
    public func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration = .zero,
                       forceKeyframe: Bool = false) throws(MediaError) {
        try shared.withLock { (s) throws(MediaError) in
            var lifecycle = s.lifecycle
            try lifecycle.apply(.run("encode"))
            if let last = s.lastPresentationTimeStamp, presentationTimeStamp <= last {
                throw MediaError(.invalidTimestamp, field: "presentationTimeStamp",
                                "\(presentationTimeStamp) is not after the previous frame's \(last)")
            }
            if let error = sink.takeError() { throw error }
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
            // Enqueued under the lock: queue order is the order frames were accepted.
            jobs.enqueue(FrameJob(lane: lane, frame: frame, presentationTimeStamp: presentationTimeStamp,
                                  duration: duration, forceKeyframe: forceKeyframe))
        }
    }

    /// Delivers every pending output — queued frames, x264's lookahead, B-frames and frame
    /// threads — and returns after the last was delivered (VideoToolbox's
    /// `VTCompressionSessionCompleteFrames`). x264 cannot continue after a flush, so the next
    /// frame starts a fresh encoder with an IDR (same parameter sets for the same settings).
    ///
    /// Blocks the calling thread until then: in async code call ``completeFramesAsync()``,
    /// which suspends the task instead.
    ///
    /// - Throws: `MediaError.Code.invalidState` after invalidate or from inside the
    ///   output handler (it would wait for itself); an error x264 reported while encoding.
    public func completeFrames() throws(MediaError) {
        try flushAndWait("completeFrames", codec: \.current) { lane, deliver in
            for encoded in try lane.flush() { deliver(encoded) }
        }
    }

    /// Ends the session (VideoToolbox's `VTCompressionSessionInvalidate`): frames not yet
    /// encoded are dropped, no output handler call starts afterwards, ``frames`` finishes, and
    /// x264 is closed on the encoding queue once a frame in progress is done. Idempotent; safe
    /// from any thread, any number of times, during an encode and from the output handler.
    public func invalidate() {
        invalidateSession(releasing: { s -> [Lane] in
            defer { s.current = nil; s.prewarmed = nil }
            return [s.current, s.prewarmed].compactMap { $0 }
        }, close: { $0.close() })
    }
}
