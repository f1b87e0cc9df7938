package import MediaCore
import Synchronization

/// Where a session's outputs go — its output handler and its `frames` asynchronous sequence —
/// with the one rule for output after invalidation, the one buffering policy of `frames`, the
/// slot of the first error the codec reported on the session's queue, and the end of output
/// when a throwing handler throws.
///
/// ## Output after invalidate or release
/// The session's `invalidate()` (which its `deinit` calls: releasing the last reference
/// invalidates) calls ``invalidate()`` here; from then on ``deliver(_:)`` drops every output,
/// so no output handler call and no `frames` element starts afterwards (a handler call already
/// running finishes), and `frames` finishes: at once for a consumer that first reads it after
/// invalidation. Queue jobs run through ``run(_:)``, which gives the codec no more work once
/// invalidated.
///
/// ## Buffering
/// `frames` is a `BoundedFrameStream` made once, on first access, with the session's
/// `OutputBufferingPolicy`: it holds at most `limit` outputs; with a keyframe test (the
/// encoder's) a drop runs up to a keyframe; each output it drops is counted (``droppedCount``).
/// The handler sees every output.
///
/// ## A handler that throws
/// When the handler throws, output ends as after invalidation (no handler call, no `frames`
/// element starts; `frames` finishes) and the error is kept for good: ``takeError()`` returns
/// it, as `MediaError.Code.outputHandlerFailed`, to every later call, and
/// ``outputHandlerError`` is the error itself.
package final class OutputSink<Output: Sendable>: Sendable {
    /// Receives every output, on the session's queue.
    package typealias Handler = @Sendable (Output) -> Void
    /// Receives every output, on the session's queue; throwing ends the output.
    package typealias ThrowingHandler = @Sendable (Output) throws -> Void

    private struct State: Sendable {
        var invalidated = false
        var stream: BoundedFrameStream<Output>?
        var producer: BoundedFrameStream<Output>.Producer?
        /// The first error reported on the queue, until a call throws it.
        var error: MediaError?
        /// The error a throwing handler threw: output has ended, and every call throws it.
        var handlerError: (any Error)?
        var handlerFailure: MediaError?
    }

    private let handler: ThrowingHandler?
    private let isKeyframe: (@Sendable (Output) -> Bool)?
    private let state = Locked(State())
    /// Set once an error waits in `State.error`: ``takeError()`` reads it without the lock, so
    /// a call on the hot path (`encode`, `decode`) takes no lock of the sink when nothing failed.
    private let hasError = Atomic<Bool>(false)
    /// The code of a non-`MediaError` failure (`encoderFailed`, `decoderFailed`).
    private let failureCode: MediaError.Code

    /// A sink that hands outputs to `handler` (and to `frames` once read).
    ///
    /// - Parameters:
    ///   - isKeyframe: for compressed outputs, which ones a decoder can start from (a drop of
    ///     `frames` runs up to one); nil when every output stands alone.
    package init(handler: ThrowingHandler?, isKeyframe: (@Sendable (Output) -> Bool)? = nil, failureCode: MediaError.Code) {
        self.handler = handler
        self.isKeyframe = isKeyframe
        self.failureCode = failureCode
    }

    /// True once ``invalidate()`` was called.
    package var isInvalidated: Bool { state.withLock { $0.invalidated } }

    /// How many outputs `frames` dropped because its buffer was full.
    package var droppedCount: Int { state.withLock { $0.stream }?.droppedFrameCount ?? 0 }

    /// The error the throwing handler threw, once it threw.
    package var outputHandlerError: (any Error)? { state.withLock { $0.handlerError } }

    /// `MediaError.Code.outputHandlerFailed` once the throwing handler threw (not taken: it is
    /// thrown by every later call); nil before.
    package var outputFailure: MediaError? {
        guard hasError.load(ordering: .acquiring) else { return nil }
        return state.withLock { $0.handlerFailure }
    }

    /// Throws ``outputFailure``.
    ///
    /// - Throws: `MediaError.Code.outputHandlerFailed` once the throwing handler threw.
    package func checkOutput() throws(MediaError) {
        if let failure = outputFailure { throw failure }
    }

    /// The session's `frames`: made on first access with `policy` (later calls return the same
    /// sequence); finished at once when made after ``invalidate()`` or a handler's error.
    package func frames(_ policy: OutputBufferingPolicy) -> BoundedFrameStream<Output> {
        state.withLock { s in
            if let stream = s.stream { return stream }
            let (stream, producer) = BoundedFrameStream<Output>.make(policy: policy, isKeyframe: isKeyframe)
            s.stream = stream
            if s.invalidated || s.handlerError != nil {
                producer.finish()
            } else {
                s.producer = producer
            }
            return stream
        }
    }

    /// Hands `output` to the handler, then to `frames`, unless invalidated or ended by a
    /// handler's error.
    package func deliver(_ output: Output) {
        let (invalidated, producer) = state.withLock { ($0.invalidated || $0.handlerError != nil, $0.producer) }
        guard !invalidated else { return }
        if let handler {
            do {
                try handler(output)
            } catch {
                endOutput(error)
                return
            }
        }
        producer?.yield(output)
    }

    /// Ends output after the handler threw `error`: kept for every later call.
    private func endOutput(_ error: any Error) {
        let producer = state.withLock { s -> BoundedFrameStream<Output>.Producer? in
            guard s.handlerError == nil else { return nil }
            s.handlerError = error
            s.handlerFailure = MediaError(.outputHandlerFailed, field: "outputHandler", "\(error)")
            hasError.store(true, ordering: .releasing)
            defer { s.producer = nil }
            return s.producer
        }
        producer?.finish()
    }

    /// Drops every later output and finishes `frames`. Idempotent, from any thread.
    package func invalidate() {
        let producer = state.withLock { s -> BoundedFrameStream<Output>.Producer? in
            s.invalidated = true
            defer { s.producer = nil }
            return s.producer
        }
        producer?.finish()
    }

    /// Keeps the first error of the queue for the next call to throw (an error that is not an
    /// `MediaError` gets the sink's failure code).
    package func record(_ error: any Error) {
        let h264 = error as? MediaError ?? MediaError(failureCode, "\(error)")
        state.withLock { s in
            if s.error == nil { s.error = h264 }
            hasError.store(true, ordering: .releasing)   // under the lock: true exactly while an error waits
        }
    }

    /// Runs one job of the session's queue, which hands its outputs to ``deliver(_:)``: not at
    /// all once invalidated; an error it throws is kept for the next call (``record(_:)``).
    package func run(_ job: () throws -> Void) {
        guard !isInvalidated else { return }
        do { try job() } catch { record(error) }
    }

    /// The error kept by ``record(_:)``, once; after a handler's error, that error, every time.
    package func takeError() -> MediaError? {
        guard hasError.load(ordering: .acquiring) else { return nil }
        return state.withLock { s in
            if let error = s.error {
                s.error = nil
                hasError.store(s.handlerFailure != nil, ordering: .relaxed)
                return error
            }
            return s.handlerFailure
        }
    }
}
