package import MediaCore
import Synchronization

/// Where a session's outputs go — its output handler and its `frames` asynchronous sequence —
/// with the one rule for output after invalidation, the one buffering policy of `frames`, and
/// the slot of the first error the codec reported on the session's queue.
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
/// `frames` is an `AsyncStream` made once, on first access, with the session's
/// ``H264/OutputBufferingPolicy``: it holds at most `limit` outputs, and each output it drops
/// is counted (``droppedCount``). The handler sees every output.
package final class OutputSink<Output: Sendable>: Sendable {
    /// Receives every output, on the session's queue.
    package typealias Handler = @Sendable (Output) -> Void

    private struct State: Sendable {
        var invalidated = false
        var stream: AsyncStream<Output>?
        var continuation: AsyncStream<Output>.Continuation?
        var dropped = 0
        /// The first error reported on the queue, until a call throws it.
        var error: MediaError?
    }

    private let handler: Handler?
    private let state = Locked(State())
    /// Set once an error waits in `State.error`: ``takeError()`` reads it without the lock, so
    /// a call on the hot path (`encode`, `decode`) takes no lock of the sink when nothing failed.
    private let hasError = Atomic<Bool>(false)
    /// The code of a non-`MediaError` failure (`encoderFailed`, `decoderFailed`).
    private let failureCode: MediaError.Code

    /// A sink that hands outputs to `handler` (and to `frames` once read).
    package init(handler: Handler?, failureCode: MediaError.Code) {
        self.handler = handler
        self.failureCode = failureCode
    }

    /// True once ``invalidate()`` was called.
    package var isInvalidated: Bool { state.withLock { $0.invalidated } }

    /// How many outputs `frames` dropped because its buffer was full.
    package var droppedCount: Int { state.withLock { $0.dropped } }

    /// The session's `frames`: made on first access with `policy` (later calls return the same
    /// sequence); finished at once when made after ``invalidate()``.
    package func frames(_ policy: OutputBufferingPolicy) -> AsyncStream<Output> {
        state.withLock { s in
            if let stream = s.stream { return stream }
            let buffering: AsyncStream<Output>.Continuation.BufferingPolicy = switch policy {
            case .keepingNewest(let limit): .bufferingNewest(max(limit, 1))
            case .keepingOldest(let limit): .bufferingOldest(max(limit, 1))
            }
            let (stream, continuation) = AsyncStream<Output>.makeStream(bufferingPolicy: buffering)
            s.stream = stream
            if s.invalidated {
                continuation.finish()
            } else {
                s.continuation = continuation
            }
            return stream
        }
    }

    /// Hands `output` to the handler, then to `frames` (counting a drop), unless invalidated.
    package func deliver(_ output: Output) {
        let (invalidated, continuation) = state.withLock { ($0.invalidated, $0.continuation) }
        guard !invalidated else { return }
        handler?(output)
        guard let continuation else { return }
        if case .dropped = continuation.yield(output) {
            state.withLock { $0.dropped += 1 }
        }
    }

    /// Drops every later output and finishes `frames`. Idempotent, from any thread.
    package func invalidate() {
        let continuation = state.withLock { s -> AsyncStream<Output>.Continuation? in
            s.invalidated = true
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.finish()
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

    /// The error kept by ``record(_:)``, once.
    package func takeError() -> MediaError? {
        guard hasError.load(ordering: .acquiring) else { return nil }
        return state.withLock { s in
            defer { s.error = nil }
            hasError.store(false, ordering: .relaxed)
            return s.error
        }
    }
}
