package import MediaCore

/// A session's configuration, as far as the shared session code reads it
/// (`EncoderConfiguration`, `DecoderConfiguration`).
package protocol SessionConfiguration: Sendable {
    /// How the session's `frames` sequence buffers outputs for a slow consumer.
    var frameBuffering: OutputBufferingPolicy { get }

    /// Checks every property.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` naming the first invalid property.
    func validate() throws(MediaError)
}

/// What a session keeps behind its one lock, as far as the shared session code reads it: the
/// lifecycle and the configuration in force.
package protocol SessionSharedState: Sendable {
    /// The session's configuration type.
    associatedtype Configuration: SessionConfiguration

    /// The session's lifecycle.
    var lifecycle: SessionLifecycle { get set }
    /// The configuration in force.
    var configuration: Configuration { get set }
}

/// A session's public state enum: the four states of ``SessionLifecycle`` under the session's
/// own names (`EncoderSession.State.prepared` and `DecoderSession.State.decoding` are
/// ``running``). Enum cases witness the requirements; the session names its running state.
package protocol SessionStateNames {
    /// ``SessionLifecycle/State/created``.
    static var created: Self { get }
    /// ``SessionLifecycle/State/configured``.
    static var configured: Self { get }
    /// ``SessionLifecycle/State/running``, under the session's name.
    static var running: Self { get }
    /// ``SessionLifecycle/State/invalidated``.
    static var invalidated: Self { get }
}

extension SessionStateNames {
    /// The session's name for a state of the shared lifecycle.
    package init(_ state: SessionLifecycle.State) {
        switch state {
        case .created: self = .created
        case .configured: self = .configured
        case .running: self = .running
        case .invalidated: self = .invalidated
        }
    }
}

/// What both sessions (`EncoderSession`, `DecoderSession`) do alike, written once: each holds
/// its state behind one lock (``shared``), hands outputs to an ``OutputSink`` (``sink``) and
/// runs its codec on a ``JobQueue`` (``jobs``); the extension implements the calls whose logic
/// is the same on both — configuring, the `frames` sequence, waiting for a flush on the queue,
/// invalidating — and each session keeps only what differs (its codec, its names, its docs).
package protocol CodecSession: AnyObject, Sendable {
    /// What the session keeps behind its lock.
    associatedtype SharedState: SessionSharedState
    /// The session's output (an encoded or a decoded frame).
    associatedtype Output: Sendable
    /// A job on the session's queue.
    associatedtype QueuedWork: Sendable

    /// The session's state, under its one lock.
    var shared: Locked<SharedState> { get }
    /// The output handler, `frames` and the queue's error slot.
    var sink: OutputSink<Output> { get }
    /// The session's serial codec queue.
    var jobs: JobQueue<QueuedWork> { get }
}

extension CodecSession {
    /// The configuration in force.
    package var sharedConfiguration: SharedState.Configuration { shared.withLock { $0.configuration } }

    /// The lifecycle state.
    package var lifecycleState: SessionLifecycle.State { shared.withLock { $0.lifecycle.state } }

    /// The session's `frames`: the sink's sequence with the buffering policy in force at the
    /// first access.
    package var outputStream: BoundedFrameStream<Output> {
        sink.frames(shared.withLock { $0.configuration.frameBuffering })
    }

    /// The session's `configure(_:)`: applies `change` to a copy, validates it and keeps it,
    /// if the lifecycle allows configuring.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` naming an invalid property (the
    ///   configuration is then unchanged); `MediaError.Code.invalidState` when the lifecycle
    ///   refuses ``SessionLifecycle/Event/configure``.
    package func applyConfiguration(_ change: (inout SharedState.Configuration) -> Void) throws(MediaError) {
        try shared.withLock { (s) throws(MediaError) in
            var lifecycle = s.lifecycle
            try lifecycle.apply(.configure)
            var updated = s.configuration
            change(&updated)
            try updated.validate()
            s.configuration = updated
            s.lifecycle = lifecycle
        }
    }

    /// Takes the session's codec under the lock for the call `call` (a
    /// ``SessionLifecycle/Event/use(_:)``), throwing after invalidation.
    private func codec<Codec>(for call: String, _ take: (SharedState) -> Codec?) throws(MediaError) -> Codec? {
        try shared.withLock { (s) throws(MediaError) -> Codec? in
            try s.lifecycle.apply(.use(call))
            return take(s)
        }
    }

    /// Flushes the codec on the queue after every queued job and waits for it: the session's
    /// `completeFrames()` and `waitForAsynchronousFrames()`. `flush` delivers every output the
    /// codec still holds; an error it throws is thrown here.
    ///
    /// - Throws: `MediaError.Code.invalidState` after invalidate or from inside the output
    ///   handler; the first error the codec reported on the queue.
    package func flushAndWait<Codec>(_ call: String, codec take: (SharedState) -> Codec?,
                                     flush: (Codec, (Output) -> Void) throws -> Void) throws(MediaError) {
        try jobs.checkNotCurrent(call)
        let codec = try codec(for: call, take)
        let sink = self.sink
        jobs.sync {
            guard let codec else { return }
            sink.run { try flush(codec) { sink.deliver($0) } }
        }
        if let error = sink.takeError() { throw error }
    }

    /// ``flushAndWait(_:codec:flush:)`` without blocking a thread: the flush is queued after
    /// every queued job and resumes the task when done (the session's `completeFramesAsync()`
    /// and `waitForAsynchronousFramesAsync()`). Allowed from a task started by the output
    /// handler: it suspends, it does not wait for the queue's own thread.
    ///
    /// - Throws: as ``flushAndWait(_:codec:flush:)``, but never for the output handler.
    package func flushAndWaitAsync<Codec: Sendable>(_ call: String, codec take: (SharedState) -> Codec?,
                                                    flush: @escaping @Sendable (Codec, (Output) -> Void) throws -> Void) async throws(MediaError) {
        let codec = try codec(for: call, take)
        let sink = self.sink
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            jobs.async {
                if let codec { sink.run { try flush(codec) { sink.deliver($0) } } }
                continuation.resume()
            }
        }
        if let error = sink.takeError() { throw error }
    }

    /// Queues a flush of the codec after every queued job, without waiting for it (the
    /// decoder's `finishDelayedFrames()`).
    ///
    /// - Throws: `MediaError.Code.invalidState` after invalidate; the first error the codec
    ///   reported on the queue.
    package func flushLater<Codec: Sendable>(_ call: String, codec take: (SharedState) -> Codec?,
                                             flush: @escaping @Sendable (Codec, (Output) -> Void) throws -> Void) throws(MediaError) {
        let codec = try codec(for: call, take)
        if let error = sink.takeError() { throw error }
        guard let codec else { return }
        let sink = self.sink
        jobs.async {
            sink.run { try flush(codec) { sink.deliver($0) } }
        }
    }

    /// The session's `invalidate()`: the first call moves the lifecycle to invalidated,
    /// invalidates the sink, takes the codecs out of the state (`release`) and queues their
    /// `close` behind the job in progress; later calls do nothing.
    package func invalidateSession<Codec: Sendable>(releasing release: (inout SharedState) -> [Codec],
                                                   close: @escaping @Sendable (Codec) -> Void) {
        let codecs = shared.withLock { s -> [Codec] in
            guard !s.lifecycle.isInvalidated else { return [] }
            _ = try? s.lifecycle.apply(.invalidate)
            sink.invalidate()
            return release(&s)
        }
        for codec in codecs {
            jobs.async { close(codec) }
        }
    }
}
