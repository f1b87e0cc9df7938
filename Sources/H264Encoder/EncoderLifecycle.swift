import H264

/// The lifecycle of an ``EncoderSession``, `created → configured → prepared → invalidated`:
/// the one place where its transitions are written. ``apply(_:)`` takes an event and returns
/// the new state, or throws `H264Error.Code.invalidState` for a call the state does not allow;
/// the session applies every event under its one lock, and every part of it (the encoding
/// queue, output delivery, ``EncoderSession/frames``) asks ``isInvalidated`` of this value.
struct EncoderLifecycle: Sendable {
    /// What happened to the session.
    enum Event: Sendable {
        /// ``EncoderSession/configure(_:)`` changes a property.
        case configure
        /// ``EncoderSession/prepare()`` starts opening x264.
        case prepare
        /// x264 opened for a ``prepare`` event.
        case prepared
        /// x264 could not open for a ``prepare`` event: the state is what it was before.
        case prepareFailed
        /// A frame was accepted, or the session switched encoders (the call named): x264 is
        /// open or will be opened by the encoding queue.
        case encode(String)
        /// A call that needs a live session and changes no state (rate changes, prewarm,
        /// completeFrames), named for the error message.
        case use(String)
        /// ``EncoderSession/invalidate()``: allowed in every state, any number of times.
        case invalidate
    }

    /// The state callers see.
    private(set) var state: EncoderSession.State = .created
    /// `prepare()` calls that are opening x264 (between ``Event/prepare`` and
    /// ``Event/prepared`` or ``Event/prepareFailed``): the configuration may not change
    /// under them.
    private var preparing = 0

    /// The one invalidated flag of a session.
    var isInvalidated: Bool { state == .invalidated }

    /// Applies `event`; returns the new state.
    ///
    /// - Throws: `H264Error.Code.invalidState` when the state does not allow the event (the
    ///   state is then unchanged).
    @discardableResult
    mutating func apply(_ event: Event) throws(H264Error) -> EncoderSession.State {
        switch (event, state) {
        case (.invalidate, _):
            state = .invalidated
        case (.prepareFailed, _):
            preparing -= 1
        case (_, .invalidated):
            throw H264Error(.invalidState, "\(Self.callName(event)) after invalidate")
        case (.configure, .prepared):
            throw H264Error(.invalidState, field: "configuration",
                            "the session is prepared: only averageBitRate and dataRateLimits can change (setAverageBitRate, setDataRateLimits)")
        case (.configure, _):
            guard preparing == 0 else {
                throw H264Error(.invalidState, field: "configuration", "the session is being prepared")
            }
            state = .configured
        case (.prepare, _):
            preparing += 1
        case (.prepared, _):
            preparing -= 1
            state = .prepared
        case (.encode, _):
            state = .prepared
        case (.use, _):
            break
        }
        return state
    }

    private static func callName(_ event: Event) -> String {
        switch event {
        case .configure: "configure"
        case .prepare, .prepared, .prepareFailed: "prepare"
        case .encode(let call), .use(let call): call
        case .invalidate: "invalidate"
        }
    }
}
