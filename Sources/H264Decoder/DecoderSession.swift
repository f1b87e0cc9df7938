public import H264
public import Logging
import Dispatch

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
/// A session is a state machine, `created → decoding → invalidated`, with every transition in
/// this type and every illegal call a thrown `H264Error` (never a crash):
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
/// The output handler runs on the decoding queue for every decoded frame, through a context
/// object that holds the session weakly: output produced after the session was released or
/// invalidated is dropped. ``frames`` offers the same frames as an `AsyncStream`.
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
        /// libavcodec is open: access units are being decoded.
        case decoding
        /// ``DecoderSession/invalidate()`` was called: every further call throws.
        case invalidated
    }

    /// Receives every decoded frame, in presentation order, on the session's decoding queue.
    public typealias OutputHandler = @Sendable (DecodedFrame) -> Void

    private struct Shared {
        var state: State = .created
        var configuration: DecoderConfiguration
        var decoder: DecoderBox?
        var hardwareAccelerationInUse: DecoderConfiguration.HardwareAcceleration?
        var continuation: AsyncStream<DecodedFrame>.Continuation?
        var stream: AsyncStream<DecodedFrame>?
    }

    private let shared: Locked<Shared>
    private let output: DecoderOutputSink
    private let context: DecoderOutputContext
    private let queue: DispatchQueue
    private let logger: Logger
    /// The format given at creation: its parameter sets go ahead of the first access unit.
    public let formatDescription: FormatDescription?
    /// Access units accepted by `decode`, oldest first; each submission of ``decodeNext`` to the
    /// queue decodes one. Submitting one stored block (not a new closure per access unit) keeps
    /// `decode` free of heap allocations.
    private let pending: Locked<PendingQueue<QueuedJob>>
    private let decodeNext: @convention(block) @Sendable () -> Void
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Creates a session (VideoToolbox's `VTDecompressionSessionCreate`). Cheap: libavcodec
    /// opens with the first access unit.
    ///
    /// - Parameters:
    ///   - formatDescription: the stream's parameter sets (from an avcC, a container, an SDP);
    ///     nil when they come in band.
    ///   - configuration: threads and real-time mode (validated here).
    ///   - logger: where the session reports damaged input and libavcodec failures.
    ///   - outputHandler: called with every decoded frame on the decoding queue.
    /// - Throws: `H264Error.Code.invalidDecoderConfiguration` naming an invalid property.
    public init(formatDescription: FormatDescription? = nil, configuration: DecoderConfiguration = DecoderConfiguration(),
                logger: Logger = DecoderSession.defaultLogger, outputHandler: OutputHandler? = nil) throws(H264Error) {
        try configuration.validate()
        self.formatDescription = formatDescription
        shared = Locked(Shared(configuration: configuration))
        output = DecoderOutputSink(handler: outputHandler)
        context = DecoderOutputContext(sink: output)
        queue = DispatchQueue(label: "H264Decoder.DecoderSession")
        self.logger = logger
        let pending = Locked(PendingQueue<QueuedJob>())
        self.pending = pending
        decodeNext = { [context, formatDescription] in
            let next = pending.withLock { $0.popFirst() }
            if let next, !context.sink.isInvalidated {
                do {
                    try next.decoder.decode(next.job, initialFormat: formatDescription, deliver: context.deliver)
                } catch {
                    context.sink.record(error)
                }
                if next.decoder.takeDamaged() {
                    context.sink.countDamaged()
                    logger.warning("libavcodec rejected a damaged access unit; decoding goes on")
                }
            }
            pending.withLockWakingWaiters { $0.finishOne() }
        }
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(output))
        context.session = self
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
    public var state: State { shared.withLock { $0.state } }

    /// The configuration in force.
    public var configuration: DecoderConfiguration { shared.withLock { $0.configuration } }

    /// The hardware decoder in use: nil before the first access unit, in software (the default,
    /// or when the configuration's `hardwareAcceleration` found no device), and after
    /// invalidation of a software session.
    public var hardwareAccelerationInUse: DecoderConfiguration.HardwareAcceleration? {
        shared.withLock { $0.hardwareAccelerationInUse }
    }

    /// How many access units libavcodec rejected as damaged so far (reported and skipped).
    public var damagedAccessUnitCount: Int { output.damagedCount }

    /// The decoded frames as an asynchronous sequence, in presentation order. It yields the
    /// frames produced after its first access and finishes when the session is invalidated.
    public var frames: AsyncStream<DecodedFrame> {
        shared.withLock { s in
            if let stream = s.stream { return stream }
            let (stream, continuation) = AsyncStream<DecodedFrame>.makeStream()
            s.stream = stream
            s.continuation = continuation
            output.setContinuation(continuation)
            if s.state == .invalidated { continuation.finish() }
            return stream
        }
    }

    /// Changes the configuration before the first access unit.
    ///
    /// - Throws: `H264Error.Code.invalidDecoderConfiguration` naming an invalid property (the
    ///   configuration is then unchanged); `H264Error.Code.invalidDecoderState` once decoding
    ///   or invalidated.
    public func configure(_ change: (inout DecoderConfiguration) -> Void) throws(H264Error) {
        try shared.withLock { (s) throws(H264Error) in
            guard s.state == .created else {
                throw H264Error(.invalidDecoderState, field: "configuration", "the session is \(s.state.rawValue): configure before the first access unit")
            }
            var updated = s.configuration
            change(&updated)
            try updated.validate()
            s.configuration = updated
        }
    }

    /// Whether the session can decode frames of `formatDescription` — VideoToolbox's
    /// `VTDecompressionSessionCanAcceptFormatDescription`. libavcodec decodes every H.264
    /// profile and switches formats within a session, so this is true for any format whose
    /// first SPS parses; a caller given false creates a new session.
    public func canAccept(_ formatDescription: FormatDescription) -> Bool {
        guard state != .invalidated else { return false }
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
    /// - Throws: `H264Error.Code.invalidDecoderState` after ``invalidate()``; the errors of
    ///   `AVCC.nalUnits(in:lengthSize:allowingEmptyNALUnits:)` when `data` is not AVCC with
    ///   4-byte lengths (checked here, before queuing); `H264Error.Code.decoderFailed` when
    ///   libavcodec cannot open, or for a failure while decoding an earlier access unit.
    public func decode(_ accessUnit: AccessUnit, presentationTimeStamp: Duration? = nil, duration: Duration = .zero) throws(H264Error) {
        try Self.checkAVCC(accessUnit.data, lengthSize: 4)
        try enqueue(Job(data: accessUnit.data, lengthSize: 4, format: accessUnit.formatDescription,
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
    public func decode(_ accessUnit: AccessUnitView, presentationTimeStamp: Duration? = nil, duration: Duration = .zero) throws(H264Error) {
        try enqueue(Job(data: [], view: accessUnit, lengthSize: 4, format: accessUnit.formatDescription,
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
    ///     nil to use the session's, or 4-byte lengths and in-band parameter sets without one.
    ///   - presentationTimeStamp: when the picture is shown; nil when unknown.
    ///   - duration: how long it is shown.
    /// - Throws: `H264Error.Code.invalidDecoderState` after ``invalidate()``; the errors of
    ///   `AVCC.nalUnits(in:lengthSize:allowingEmptyNALUnits:)` for bytes that are not AVCC
    ///   (checked here, before queuing); `H264Error.Code.decoderFailed` for a failure of
    ///   libavcodec.
    public func decode(avcc: [UInt8], formatDescription: FormatDescription? = nil,
                       presentationTimeStamp: Duration? = nil, duration: Duration = .zero) throws(H264Error) {
        let format = formatDescription ?? self.formatDescription
        try Self.checkAVCC(avcc, lengthSize: format?.nalUnitLengthSize ?? 4)
        try enqueue(Job(data: avcc, lengthSize: format?.nalUnitLengthSize ?? 4, format: formatDescription,
                        carriesParameterSets: false, isKeyframe: false,
                        presentationTimeStamp: presentationTimeStamp, duration: duration))
    }

    /// Checks that `bytes` split into NAL units (without collecting them: no allocation),
    /// tolerating Annex-B where lengths belong as ``AVCC`` reads it (libavcodec reads that part
    /// as Annex-B, after the in-place conversion leaves it as it is).
    private static func checkAVCC(_ bytes: [UInt8], lengthSize: Int) throws(H264Error) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(H264Error) in
                _ = try AVCC.walk(buffer, lengthSize: lengthSize, allowingEmptyNALUnits: false, toleratingAnnexB: true) { _, _ in }
            }
        }
        try result.get()
    }

    private func enqueue(_ job: Job) throws(H264Error) {
        let decoder = try openDecoder(caller: "decode", firstJob: job)
        if let error = output.takeError() { throw error }
        pending.withLock { $0.append(QueuedJob(job: job, decoder: decoder)) }
        queue.async(execute: decodeNext)
    }

    /// The session's decoder, opened on the caller's thread for the first access unit, with the
    /// reorder depth its SPS allows (see `SequenceParameterSet.maximumReorderDepth`).
    private func openDecoder(caller: String, firstJob job: Job) throws(H264Error) -> DecoderBox {
        try shared.withLock { (s) throws(H264Error) -> DecoderBox in
            guard s.state != .invalidated else { throw H264Error(.invalidDecoderState, "\(caller) after invalidate") }
            if let decoder = s.decoder { return decoder }
            let reorder = s.configuration.realTime ? 0
                : SequenceParameterSet.reorderDepth(format: job.format ?? formatDescription, avcc: job.view?.bytes(format: .avcc) ?? job.data,
                                                    lengthSize: job.lengthSize) ?? 0
            let libavcodec = try LibAVCodecDecoder(configuration: s.configuration, reorderDepth: reorder)
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
            s.state = .decoding
            return decoder
        }
    }

    /// Outputs every delayed frame and waits until all queued access units are decoded and
    /// their frames delivered (VideoToolbox's `VTDecompressionSessionWaitForAsynchronousFrames`).
    /// The session stays usable: the next access unit should begin with a keyframe, as after a
    /// seek.
    ///
    /// - Throws: `H264Error.Code.invalidDecoderState` after invalidate or from inside the output
    ///   handler (it would wait for itself); an error libavcodec reported while decoding.
    public func waitForAsynchronousFrames() throws(H264Error) {
        guard DispatchQueue.getSpecific(key: Self.queueKey) != ObjectIdentifier(output) else {
            throw H264Error(.invalidDecoderState, "waitForAsynchronousFrames cannot be called from the output handler")
        }
        let decoder = try shared.withLock { (s) throws(H264Error) -> DecoderBox? in
            guard s.state != .invalidated else { throw H264Error(.invalidDecoderState, "waitForAsynchronousFrames after invalidate") }
            return s.decoder
        }
        let context = self.context
        queue.sync {
            guard let decoder, !context.sink.isInvalidated else { return }
            do { try decoder.drain(deliver: context.deliver) } catch { context.sink.record(error) }
        }
        if let error = output.takeError() { throw error }
    }

    /// Asks for the delayed frames without waiting for them (VideoToolbox's
    /// `VTDecompressionSessionFinishDelayedFrames`): they are output after the access units
    /// already queued. The session stays usable.
    ///
    /// - Throws: `H264Error.Code.invalidDecoderState` after invalidate; an error libavcodec
    ///   reported while decoding an earlier access unit.
    public func finishDelayedFrames() throws(H264Error) {
        let decoder = try shared.withLock { (s) throws(H264Error) -> DecoderBox? in
            guard s.state != .invalidated else { throw H264Error(.invalidDecoderState, "finishDelayedFrames after invalidate") }
            return s.decoder
        }
        if let error = output.takeError() { throw error }
        guard let decoder else { return }
        let context = self.context
        queue.async {
            guard !context.sink.isInvalidated else { return }
            do { try decoder.drain(deliver: context.deliver) } catch { context.sink.record(error) }
        }
    }

    /// Blocks until at most `count` queued access units wait for libavcodec (the one being
    /// decoded included): back-pressure for a producer that reads faster than libavcodec
    /// decodes. A receiving thread of a live stream should not call it.
    ///
    /// - Throws: `H264Error.Code.invalidDecoderState` from inside the output handler.
    public func waitForQueuedAccessUnits(downTo count: Int) throws(H264Error) {
        guard DispatchQueue.getSpecific(key: Self.queueKey) != ObjectIdentifier(output) else {
            throw H264Error(.invalidDecoderState, "waitForQueuedAccessUnits cannot be called from the output handler")
        }
        let limit = max(count, 0)
        pending.wait { $0.unfinished <= limit }
    }

    /// Ends the session (VideoToolbox's `VTDecompressionSessionInvalidate`): access units not
    /// yet decoded are dropped, no output handler call starts afterwards, ``frames`` finishes,
    /// and libavcodec is closed on the decoding queue once an access unit in progress is done.
    /// Idempotent; safe from any thread, any number of times, during a decode and from the
    /// output handler.
    public func invalidate() {
        let decoder: DecoderBox?? = shared.withLock { s in
            guard s.state != .invalidated else { return .none }
            s.state = .invalidated
            output.invalidate()
            defer { s.decoder = nil }
            return .some(s.decoder)
        }
        if case .some(.some(let decoder)) = decoder {
            queue.async { decoder.close() }
        }
    }
}

/// One access unit waiting for the decoding queue.
struct Job: Sendable {
    /// The access unit's bytes, unless it is a `view`.
    let data: [UInt8]
    /// The access unit as pieces of received packets, copied once into libavcodec's input.
    var view: AccessUnitView? = nil
    let lengthSize: Int
    let format: FormatDescription?
    let carriesParameterSets: Bool
    let isKeyframe: Bool
    let presentationTimeStamp: Duration?
    let duration: Duration
}

/// An access unit and the decoder it goes to.
struct QueuedJob: Sendable {
    let job: Job
    let decoder: DecoderBox
}

/// The libavcodec decoder and what the queue remembers between access units.
///
/// `@unchecked Sendable`: its mutable state is used only on the session's serial decoding queue
/// (every method is called from a job on that queue).
final class DecoderBox: @unchecked Sendable {
    private var decoder: LibAVCodecDecoder?
    /// The format whose parameter sets libavcodec last received out of band.
    private var sentFormat: FormatDescription?
    private var mark = FormatChangeMark()
    private var damaged = false

    init(decoder: LibAVCodecDecoder) { self.decoder = decoder }

    func decode(_ job: Job, initialFormat: FormatDescription?, deliver: (DecodedFrame) -> Void) throws(H264Error) {
        guard let decoder else { return }
        var prefix: [[UInt8]] = []
        if let format = job.format ?? initialFormat, format != sentFormat {
            if sentFormat != nil { mark.set(presentationTimeStamp: job.presentationTimeStamp.map(Self.microseconds)) }
            sentFormat = format
            if !job.carriesParameterSets {
                prefix = format.sequenceParameterSets + format.pictureParameterSets
            }
        }
        var body = job.data
        if job.lengthSize != 4 {
            body = try AnnexB.fromAVCC(job.data, lengthSize: job.lengthSize, startCodes: .fourByte)
        }
        let prefixBytes = prefix.reduce(0) { $0 + 4 + $1.count }
        let result = try decoder.send(size: prefixBytes + (job.view?.encodedByteCount ?? body.count), presentationTimeStamp: job.presentationTimeStamp.map(Self.microseconds),
                                      duration: Self.microseconds(job.duration), isKeyframe: job.isKeyframe) { (buffer) throws(H264Error) in
            var position = 0
            for nal in prefix {
                buffer.storeBytes(of: UInt32(1).bigEndian, toByteOffset: position, as: UInt32.self)
                buffer.baseAddress!.advanced(by: position + 4).copyMemory(from: nal, byteCount: nal.count)
                position += 4 + nal.count
            }
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[position...])
            if let view = job.view {
                view.copyBytes(into: rest, format: .annexB)
                return
            }
            body.withUnsafeBytes { rest.copyMemory(from: $0) }
            if job.lengthSize == 4 { try AnnexB.convertAVCCInPlace(rest) }
        }
        if case .damaged = result { damaged = true }
        try decoder.receiveFrames(mark: &mark, deliver)
    }

    func drain(deliver: (DecodedFrame) -> Void) throws(H264Error) {
        try decoder?.drain(mark: &mark, deliver)
    }

    /// True once after an access unit libavcodec rejected.
    func takeDamaged() -> Bool {
        defer { damaged = false }
        return damaged
    }

    func close() { decoder = nil }

    static func microseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return seconds < 0 ? Int64.min + 1 : Int64.max }
        return product + attoseconds / 1_000_000_000_000
    }
}

/// Holds the session weakly for the decoding queue: output produced after the session was
/// released (or invalidated) is dropped.
final class DecoderOutputContext: Sendable {
    let sink: DecoderOutputSink
    nonisolated(unsafe) weak var session: DecoderSession?

    init(sink: DecoderOutputSink) { self.sink = sink }

    func deliver(_ frame: DecodedFrame) {
        guard session != nil else { return }
        sink.deliver(frame)
    }
}

/// Where outputs go, and the session's asynchronous error slot.
final class DecoderOutputSink: Sendable {
    private struct State {
        var invalidated = false
        var error: H264Error?
        var damaged = 0
        var continuation: AsyncStream<DecodedFrame>.Continuation?
    }
    private let handler: DecoderSession.OutputHandler?
    private let state = Locked(State())

    init(handler: DecoderSession.OutputHandler?) { self.handler = handler }

    var isInvalidated: Bool { state.withLock { $0.invalidated } }
    var damagedCount: Int { state.withLock { $0.damaged } }

    func setContinuation(_ continuation: AsyncStream<DecodedFrame>.Continuation) {
        state.withLock { $0.continuation = continuation }
    }

    func deliver(_ frame: DecodedFrame) {
        let (invalidated, continuation) = state.withLock { ($0.invalidated, $0.continuation) }
        guard !invalidated else { return }
        handler?(frame)
        continuation?.yield(frame)
    }

    func invalidate() {
        let continuation = state.withLock { s in
            s.invalidated = true
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.finish()
    }

    func countDamaged() { state.withLock { $0.damaged += 1 } }

    func record(_ error: any Error) {
        let h264 = error as? H264Error ?? H264Error(.decoderFailed, "\(error)")
        state.withLock { if $0.error == nil { $0.error = h264 } }
    }

    func takeError() -> H264Error? {
        state.withLock { s in
            defer { s.error = nil }
            return s.error
        }
    }
}
