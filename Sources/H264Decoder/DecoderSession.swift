public import H264
public import Logging
package import H264SessionCore
import Synchronization

/// A VideoToolbox-style H.264 decompression session over libavcodec — the counterpart of
/// `VTDecompressionSession`, and the twin of `EncoderSession`.
///
/// ```swift
/// let session = try DecoderSession(formatDescription: format) { frame in show(frame) }
/// for unit in accessUnits { try session.decode(unit, presentationTimeStamp: unit.pts) }
/// try session.waitForAsynchronousFrames()
/// session.invalidate()
/// ```
///
/// ## Lifecycle
/// A session is a state machine, `created → configured → decoding → invalidated` — the one
/// lifecycle of both sessions (`EncoderSession` calls `decoding` `prepared`), applied under the
/// session's lock — and every illegal call throws `MediaError.Code.invalidState` (never a
/// crash), with the same wording on both sessions ("decode after invalidate"):
/// - ``init(formatDescription:configuration:logger:outputHandler:)`` (VideoToolbox's
///   `VTDecompressionSessionCreate`) validates the configuration; libavcodec opens with the
///   first access unit, on the caller's thread;
/// - ``configure(_:)`` changes threads or real-time mode until the first access unit;
/// - ``decode(_:presentationTimeStamp:duration:)-(AccessUnit,_,_)`` (`VTDecompressionSessionDecodeFrame`), and for an
///   access unit that refers to its received packets ``decode(_:presentationTimeStamp:duration:)-(AccessUnitView,_,_)``
///   queues an access unit and returns;
/// - ``waitForAsynchronousFrames()`` (`VTDecompressionSessionWaitForAsynchronousFrames`)
///   outputs every delayed frame and waits for them; the session stays usable;
/// - ``invalidate()`` (`VTDecompressionSessionInvalidate`) ends the session: idempotent, from
///   any thread, at any time.
///
/// ## Threading: why decode does not wait
/// `decode` checks the state, queues the access unit on the session's serial decoding queue
/// and returns, so a receiving thread (a socket reader, an RTP depacketizer) never waits for
/// libavcodec. The queue is the only place libavcodec runs, so outputs arrive in presentation
/// order from one serial context. A producer that reads faster than libavcodec decodes (a
/// file) bounds the queue with ``waitForQueuedAccessUnits(downTo:)``.
///
/// ## Parameter sets and format changes
/// Parameter sets may come in band (inside the access units, as in an Annex-B stream) or from a
/// `FormatDescription` (the session's, or each `AccessUnit`'s): whenever the format to decode
/// with differs from the one the decoder last received, its SPS and PPS are sent ahead of the
/// access unit. libavcodec reallocates its picture buffers itself when a new SPS changes size,
/// profile, chroma format or bit depth (after outputting the frames of the old one); the first
/// frame of a new format carries ``DecodedFrame/Flags/formatChanged``.
///
/// ## Output
/// The output handler runs on the decoding queue for every decoded frame; a throwing one
/// (``init(format:configuration:logger:throwingOutputHandler:)``) ends the output with its
/// first error, which every later call throws. ``frames`` offers the same frames as a
/// `BoundedFrameStream` that holds at most ``DecoderConfiguration/frameBuffering`` of them for
/// its consumer (drops are counted in ``droppedFrameCount``). The rule for output
/// after the end, the same on both sessions: once ``invalidate()`` was called — releasing the
/// last reference calls it — no output handler call and no `frames` element starts (one already
/// running finishes), `frames` finishes, and queued access units are not decoded.
/// Damaged input is not an error: libavcodec conceals what it can (the frame carries
/// ``DecodedFrame/Flags/damaged``) and access units it rejects are counted
/// (``damagedAccessUnitCount``). Errors libavcodec reports while decoding queued units (out of
/// memory, internal failures) are thrown by the next call.
public final class DecoderSession: Sendable {
    /// The session's lifecycle state.
    public enum State: String, Hashable, Sendable {
        /// Created; libavcodec is not open yet and ``DecoderSession/configure(_:)`` may change
        /// the configuration.
        case created
        /// The configuration was changed after creation; libavcodec is still not open.
        case configured
        /// libavcodec is open: access units are being decoded.
        case decoding
        /// ``DecoderSession/invalidate()`` was called: every further call throws.
        case invalidated
    }

    /// Receives every decoded frame, in presentation order, on the session's decoding queue.
    public typealias OutputHandler = @Sendable (DecodedFrame) -> Void
    /// Receives every decoded frame, in presentation order, on the session's decoding queue;
    /// an error it throws ends the session's output
    /// (``init(format:configuration:logger:throwingOutputHandler:)``).
    public typealias ThrowingOutputHandler = @Sendable (DecodedFrame) throws -> Void

    /// The session's state, under its one lock.
    package let shared: Locked<DecoderSessionState>
    /// The output handler, `frames` and the decoding queue's error slot. Shared with the jobs on
    /// the queue, which never hold the session itself (so the last release of the session runs
    /// `deinit`, which invalidates).
    package let sink: OutputSink<DecodedFrame>
    /// The serial decoding queue and its access units.
    package let jobs: JobQueue<QueuedJob>
    private let damaged: DamagedCount
    private let logger: Logger
    /// The format given at creation: its parameter sets go ahead of the first access unit.
    let initialFormat: StreamFormat?

    /// Creates a session (VideoToolbox's `VTDecompressionSessionCreate`). Cheap: libavcodec
    /// opens with the first access unit.
    ///
    /// - Parameters:
    ///   - formatDescription: the stream's parameter sets (from an avcC, a container, an SDP);
    ///     nil when they come in band.
    ///   - configuration: threads and real-time mode (validated here).
    ///   - logger: where the session reports damaged input and libavcodec failures.
    ///   - outputHandler: called with every decoded frame on the decoding queue.
    /// - Throws: `MediaError.Code.invalidConfiguration` naming an invalid property.
    public convenience init(formatDescription: FormatDescription? = nil, configuration: DecoderConfiguration = DecoderConfiguration(),
                            logger: Logger = DecoderSession.defaultLogger, outputHandler: OutputHandler? = nil) throws(MediaError) {
        try self.init(format: formatDescription.map(StreamFormat.h264), configuration: configuration, logger: logger,
                      outputHandler: outputHandler)
    }

    /// Creates a session for a stream of either codec (VideoToolbox's
    /// `VTDecompressionSessionCreate` with a `CMVideoFormatDescription` of any codec type): the
    /// one initializer behind the H.264 and H.265 ones. Frames go in with
    /// ``decode(_:duration:)``.
    ///
    /// - Parameters:
    ///   - formatDescription: the stream's format (`RTSPClient.format`, an FLV sequence header's,
    ///     an encoder's); nil when the parameter sets come in band — then
    ///     `configuration.codec` names the codec, else the first frame does.
    ///   - configuration: threads, real-time mode and codec (validated here).
    ///   - logger: where the session reports damaged input and libavcodec failures.
    ///   - outputHandler: called with every decoded frame on the decoding queue.
    /// - Throws: `MediaError.Code.invalidConfiguration` naming an invalid property, or a format
    ///   of another codec than `configuration.codec`.
    public convenience init(format formatDescription: VideoFormatDescription?, configuration: DecoderConfiguration = DecoderConfiguration(),
                            logger: Logger = DecoderSession.defaultLogger, outputHandler: OutputHandler? = nil) throws(MediaError) {
        try self.init(format: formatDescription, configuration: configuration, logger: logger, handler: outputHandler)
    }

    /// Creates a session for a stream of either codec whose output handler may throw: the
    /// first error it throws ends the session's output — no handler call and no ``frames``
    /// element starts afterwards, and ``frames`` finishes — and every later call that feeds or
    /// waits for the session (`decode`, ``waitForAsynchronousFrames()``, the waits) throws
    /// `MediaError.Code.outputHandlerFailed` with the error's description;
    /// ``outputHandlerError`` is the error itself. ``invalidate()`` ends the session.
    ///
    /// - Parameters:
    ///   - formatDescription: the stream's format; nil when the parameter sets come in band.
    ///   - configuration: threads, real-time mode and codec (validated here).
    ///   - logger: where the session reports damaged input and libavcodec failures.
    ///   - throwingOutputHandler: called with every decoded frame on the decoding queue.
    /// - Throws: `MediaError.Code.invalidConfiguration` naming an invalid property, or a format
    ///   of another codec than `configuration.codec`.
    public convenience init(format formatDescription: VideoFormatDescription?, configuration: DecoderConfiguration = DecoderConfiguration(),
                            logger: Logger = DecoderSession.defaultLogger,
                            throwingOutputHandler: @escaping ThrowingOutputHandler) throws(MediaError) {
        try self.init(format: formatDescription, configuration: configuration, logger: logger, handler: throwingOutputHandler)
    }

    /// The one initializer behind the public ones.
    init(format formatDescription: VideoFormatDescription?, configuration: DecoderConfiguration, logger: Logger,
         handler: ThrowingOutputHandler?) throws(MediaError) {
        try configuration.validate()
        if let codec = configuration.codec, let format = formatDescription, format.codec != codec {
            throw MediaError(.invalidConfiguration, field: "codec", "a \(format.codec.rawValue) format description for a \(codec.rawValue) session")
        }
        initialFormat = formatDescription
        shared = Locked(DecoderSessionState(configuration: configuration, format: formatDescription))
        let sink = OutputSink<DecodedFrame>(handler: handler, failureCode: .decoderFailed)
        self.sink = sink
        let damaged = DamagedCount()
        self.damaged = damaged
        self.logger = logger
        jobs = JobQueue(label: "H264Decoder.DecoderSession") { next in
            sink.run {
                // Counted whether or not the access unit also failed.
                defer {
                    if next.decoder.takeDamaged() {
                        damaged.count.add(1, ordering: .relaxed)
                        logger.warning("libavcodec rejected a damaged access unit; decoding goes on")
                    }
                }
                try next.decoder.decode(next.job, initialFormat: formatDescription, deliver: sink.deliver)
            }
        }
    }

    deinit {
        invalidate()
    }

    /// The logger sessions use unless given one: label `H264Decoder`, level `warning`.
    public static var defaultLogger: Logger {
        var logger = Logger(label: "H264Decoder")
        logger.logLevel = .warning
        return logger
    }

    /// The lifecycle state.
    public var state: State { State(lifecycleState) }

    /// The configuration in force.
    public var configuration: DecoderConfiguration { sharedConfiguration }

    /// The hardware decoder in use: nil before the first access unit, in software (the default,
    /// or when the configuration's `hardwareAcceleration` found no device), and after
    /// invalidation of a software session.
    public var hardwareAccelerationInUse: DecoderConfiguration.HardwareAcceleration? {
        shared.withLock { $0.hardwareAccelerationInUse }
    }

    /// How many access units libavcodec rejected as damaged so far (reported and skipped).
    public var damagedAccessUnitCount: Int { damaged.count.load(ordering: .relaxed) }

    /// The format description (SPS, PPS, avcC) of the compressed stream the session works on
    /// now — the same meaning as `EncoderSession.formatDescription`: the parameter sets the
    /// access units most recently accepted are coded with, as far as the session was told. Here,
    /// the format given at creation, replaced by the `formatDescription` of each access unit
    /// (or `decode(avcc:formatDescription:…)` call) that has one; `nil` while none was given
    /// (parameter sets in band only).
    public var formatDescription: FormatDescription? { shared.withLock { $0.format?.h264 } }

    /// The codec being decoded: nil until the first access unit unless the configuration or the
    /// format description named it; then fixed for the session's life.
    public var codec: VideoCodec? {
        shared.withLock { $0.codec ?? $0.configuration.codec ?? $0.format?.codec }
    }

    /// The decoded frames as an asynchronous sequence, in presentation order. It yields the
    /// frames produced after its first access, holds at most
    /// ``DecoderConfiguration/frameBuffering`` of them for a consumer that has not read them
    /// (the policy in force at the first access: `.keepingNewest` drops the oldest waiting
    /// frame, `.keepingOldest` the new one, each counted in ``droppedFrameCount``;
    /// `.waitingForConsumer` makes the decoding queue wait for the consumer), and finishes when
    /// the session is invalidated (at once when it is first read after ``invalidate()``) or
    /// its throwing output handler threw. Decoded frames stand alone: a drop is one frame.
    /// Each frame held keeps one of libavcodec's picture buffers.
    public var frames: BoundedFrameStream<DecodedFrame> { outputStream }

    /// How many decoded frames ``frames`` dropped because its buffer was full (its consumer
    /// read too slowly or not at all). The output handler saw them all.
    public var droppedFrameCount: Int { sink.droppedCount }

    /// The error the throwing output handler threw, once it threw (the session's output has
    /// ended); nil otherwise.
    public var outputHandlerError: (any Error)? { sink.outputHandlerError }

    /// Changes the configuration before the first access unit.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` naming an invalid property (the
    ///   configuration is then unchanged); `MediaError.Code.invalidState` once decoding or
    ///   invalidated.
    public func configure(_ change: (inout DecoderConfiguration) -> Void) throws(MediaError) {
        try applyConfiguration(change)
    }

    /// Whether the session can decode frames of `formatDescription` — VideoToolbox's
    /// `VTDecompressionSessionCanAcceptFormatDescription`. libavcodec decodes every H.264
    /// profile and switches formats within a session, so this is true for any format whose
    /// first SPS parses, in a session that is not decoding H.265; a caller given false creates
    /// a new session.
    public func canAccept(_ formatDescription: FormatDescription) -> Bool {
        guard accepts(.h264) else { return false }
        return formatDescription.sequenceParameterSet != nil && !formatDescription.pictureParameterSets.isEmpty
    }

    /// Queues one access unit for decoding and returns without waiting for libavcodec
    /// (VideoToolbox's `VTDecompressionSessionDecodeFrame` with asynchronous decompression).
    ///
    /// - Parameters:
    ///   - accessUnit: the NAL units of one picture in AVCC with 4-byte lengths, as
    ///     `AccessUnitReceiver` and `AccessUnitAssembler` produce them. Its
    ///     `formatDescription`, when set, is the format it is decoded with.
    ///   - presentationTimeStamp: when the picture is shown (carried to its ``DecodedFrame``,
    ///     at microsecond precision); nil when unknown.
    ///   - duration: how long it is shown.
    /// - Throws: `MediaError.Code.invalidState` after ``invalidate()``; the errors of
    ///   `AVCC.nalUnits(in:lengthSize:allowingEmptyNALUnits:)` when `data` is not AVCC with
    ///   4-byte lengths (checked here, before queuing); `MediaError.Code.decoderFailed` when
    ///   libavcodec cannot open, or for a failure while decoding an earlier access unit.
    public func decode(_ accessUnit: AccessUnit, presentationTimeStamp: Duration? = nil, duration: Duration = .zero) throws(MediaError) {
        try Self.checkAVCC(accessUnit.data, lengthSize: 4)
        try enqueue(Job(data: accessUnit.data, lengthSize: 4, format: accessUnit.formatDescription.map(StreamFormat.h264), codec: .h264,
                        carriesParameterSets: accessUnit.nalUnitTypes.contains(.sequenceParameterSet),
                        isKeyframe: accessUnit.isIDR, presentationTimeStamp: presentationTimeStamp, duration: duration))
    }

    /// Queues one access unit that refers to the packets it arrived in (from
    /// `RTPZeroCopyDepacketizer`) and returns without waiting for libavcodec (VideoToolbox's
    /// `VTDecompressionSessionDecodeFrame` with a sample whose `CMBlockBuffer` has several memory
    /// blocks). The view keeps its packets until libavcodec has its input, into which its bytes
    /// are copied once, as Annex-B.
    ///
    /// - Parameters:
    ///   - accessUnit: the NAL units of one picture. Its `formatDescription`, when set, is the
    ///     format it is decoded with.
    ///   - presentationTimeStamp: when the picture is shown; nil when unknown.
    ///   - duration: how long it is shown.
    /// - Throws: as ``decode(_:presentationTimeStamp:duration:)-(AccessUnit,_,_)``, but for the
    ///   AVCC check: a view's NAL units are whole by construction.
    public func decode(_ accessUnit: AccessUnitView, presentationTimeStamp: Duration? = nil, duration: Duration = .zero) throws(MediaError) {
        try enqueue(Job(data: [], view: accessUnit, lengthSize: 4, format: accessUnit.formatDescription.map(StreamFormat.h264), codec: .h264,
                        carriesParameterSets: accessUnit.nalUnitTypes.contains(.sequenceParameterSet),
                        isKeyframe: accessUnit.isIDR, presentationTimeStamp: presentationTimeStamp, duration: duration))
    }

    /// Queues one access unit given as AVCC bytes (a sample of an MP4 track, an `EncodedFrame`'s
    /// `data`) and returns without waiting for libavcodec
    /// (VideoToolbox's `VTDecompressionSessionDecodeFrame`).
    ///
    /// - Parameters:
    ///   - avcc: length-prefixed NAL units of one access unit.
    ///   - formatDescription: the format of the sample (its length size and parameter sets);
    ///     nil to use the one given at creation, or 4-byte lengths and in-band parameter
    ///     sets without one.
    ///   - presentationTimeStamp: when the picture is shown; nil when unknown.
    ///   - duration: how long it is shown.
    /// - Throws: `MediaError.Code.invalidState` after ``invalidate()``; the errors of
    ///   `AVCC.nalUnits(in:lengthSize:allowingEmptyNALUnits:)` for bytes that are not AVCC
    ///   (checked here, before queuing); `MediaError.Code.decoderFailed` for a failure of
    ///   libavcodec.
    public func decode(avcc: [UInt8], formatDescription: FormatDescription? = nil,
                       presentationTimeStamp: Duration? = nil, duration: Duration = .zero) throws(MediaError) {
        let format = formatDescription.map(StreamFormat.h264) ?? initialFormat
        try Self.checkAVCC(avcc, lengthSize: format?.nalUnitLengthSize ?? 4)
        try enqueue(Job(data: avcc, lengthSize: format?.nalUnitLengthSize ?? 4, format: formatDescription.map(StreamFormat.h264), codec: nil,
                        carriesParameterSets: false, isKeyframe: false,
                        presentationTimeStamp: presentationTimeStamp, duration: duration))
    }

    /// Checks that `bytes` split into NAL units (without collecting them: no allocation),
    /// tolerating Annex-B where lengths belong as `AVCC` reads it (libavcodec reads that part
    /// as Annex-B, after the in-place conversion leaves it as it is).
    static func checkAVCC(_ bytes: [UInt8], lengthSize: Int) throws(MediaError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in
                _ = try AVCC.walk(buffer, lengthSize: lengthSize, allowingEmptyNALUnits: false, toleratingAnnexB: true) { _, _ in }
            }
        }
        try result.get()
    }

    func enqueue(_ job: Job) throws(MediaError) {
        let decoder = try openDecoder(caller: "decode", firstJob: job)
        if let error = sink.takeError() { throw error }
        jobs.enqueue(QueuedJob(job: job, decoder: decoder))
    }

    /// The session's decoder, opened on the caller's thread for the first access unit, with the
    /// reorder depth its SPS allows (see `SequenceParameterSet.maximumReorderDepth`).
    private func openDecoder(caller: String, firstJob job: Job) throws(MediaError) -> DecoderBox {
        try shared.withLock { (s) throws(MediaError) -> DecoderBox in
            var lifecycle = s.lifecycle
            try lifecycle.apply(.run(caller))
            let codec = s.codec ?? s.configuration.codec ?? job.format?.codec ?? initialFormat?.codec ?? job.codec ?? .h264
            if let other = job.format?.codec ?? job.codec, other != codec {
                throw MediaError(.invalidConfiguration, field: "codec", "\(caller): a \(other.rawValue) access unit for a session decoding \(codec.rawValue)")
            }
            if let format = job.format { s.format = format }
            if let decoder = s.decoder { return decoder }
            let reorder = s.configuration.realTime ? 0
                : StreamFormat.reorderDepth(codec: codec, format: job.format ?? initialFormat, avcc: job.view?.bytes(format: .avcc) ?? job.data,
                                            lengthSize: job.lengthSize) ?? 0
            let libavcodec = try LibAVCodecDecoder(codec: codec, configuration: s.configuration, reorderDepth: reorder)
            s.codec = codec
            if let wanted = s.configuration.hardwareAcceleration {
                if let used = libavcodec.hardwareAcceleration {
                    logger.info("decoding in hardware", metadata: ["device": "\(used.rawValue)"])
                } else {
                    logger.warning("no \(wanted.rawValue) device opened: decoding in software")
                }
            }
            s.hardwareAccelerationInUse = libavcodec.hardwareAcceleration
            let decoder = DecoderBox(decoder: libavcodec)
            s.decoder = decoder
            s.lifecycle = lifecycle
            return decoder
        }
    }

    /// Ends the session (VideoToolbox's `VTDecompressionSessionInvalidate`): access units not
    /// yet decoded are dropped, no output handler call starts afterwards, ``frames`` finishes,
    /// and libavcodec is closed on the decoding queue once an access unit in progress is done.
    /// Idempotent; safe from any thread, any number of times, during a decode and from the
    /// output handler.
    public func invalidate() {
        invalidateSession(releasing: { s -> [DecoderBox] in
            defer { s.decoder = nil }
            return s.decoder.map { [$0] } ?? []
        }, close: { $0.close() })
    }
}
