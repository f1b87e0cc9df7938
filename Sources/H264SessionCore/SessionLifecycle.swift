package import MediaCore

/// The lifecycle of a session, `created → configured → running → invalidated`: the one place
/// where the transitions of `EncoderSession` (whose `prepared` is ``State/running``) and
/// `DecoderSession` (whose `decoding` is ``State/running``) are written.
///
/// ``apply(_:)`` takes an event and returns the new state, or throws
/// `MediaError.Code.invalidState` for a call the state does not allow (the state is then
/// unchanged). A session applies every event under its one lock. ``Event/invalidate`` is
/// allowed in every state, any number of times; every other call after it throws
/// "CALL after invalidate".
package struct SessionLifecycle: Sendable {
    /// The states every session goes through.
    package enum State: Hashable, Sendable {
        /// Created with a valid configuration; nothing of the codec library is open.
        case created
        /// The configuration was changed after creation; still nothing open.
        case configured
        /// The codec library is open (or will be opened by the first queued job): the
        /// configuration is fixed (but for what the session changes live).
        case running
        /// Invalidated: every further call but `invalidate()` throws.
        case invalidated
    }

    /// What happened to the session.
    package enum Event: Sendable {
        /// `configure(_:)` changes a property: allowed until the session runs.
        case configure
        /// An explicit prepare starts opening the codec library (the configuration may not
        /// change until ``prepared`` or ``prepareFailed``).
        case prepare
        /// The codec library opened for a ``prepare`` event.
        case prepared
        /// The codec library could not open for a ``prepare`` event: the state is unchanged.
        case prepareFailed
        /// A call that feeds the codec (the call named: `encode`, `decode`, a switch of
        /// encoders): the session runs.
        case run(String)
        /// A call that needs a live session and changes no state (the call named).
        case use(String)
        /// `invalidate()`.
        case invalidate
    }

    /// The state callers see.
    package private(set) var state: State = .created
    /// Explicit prepares that are opening the codec library.
    private var preparing = 0
    /// Why `configure` is refused while running (the session's own advice).
    private let configureWhileRunning: String

    /// A lifecycle in ``State/created``.
    ///
    /// - Parameter configureWhileRunning: the message of the error `configure` throws once
    ///   the session runs.
    package init(configureWhileRunning: String) {
        self.configureWhileRunning = configureWhileRunning
    }

    /// The session's one invalidated flag for calls (output has its own, in ``OutputSink``,
    /// set by the same `invalidate()`).
    package var isInvalidated: Bool { state == .invalidated }

    /// Applies `event`; returns the new state.
    ///
    /// - Throws: `MediaError.Code.invalidState` when the state does not allow the event (the
    ///   state is then unchanged).
    @discardableResult
    package mutating func apply(_ event: Event) throws(MediaError) -> State {
        switch (event, state) {
        case (.invalidate, _):
            state = .invalidated
        case (.prepareFailed, _):
            preparing -= 1
        case (_, .invalidated):
            throw Self.afterInvalidate(Self.callName(event))
        case (.configure, .running):
            throw MediaError(.invalidState, field: "configuration", configureWhileRunning)
        case (.configure, _):
            guard preparing == 0 else {
                throw MediaError(.invalidState, field: "configuration", "the session is being prepared")
            }
            state = .configured
        case (.prepare, _):
            preparing += 1
        case (.prepared, _):
            preparing -= 1
            state = .running
        case (.run, _):
            state = .running
        case (.use, _):
            break
        }
        return state
    }

    /// The error of any call after `invalidate()`: `invalidState`, "CALL after invalidate".
    package static func afterInvalidate(_ call: String) -> MediaError {
        MediaError(.invalidState, "\(call) after invalidate")
    }

    /// The error of a wait from inside the output handler: `invalidState`, "CALL cannot be
    /// called from the output handler".
    package static func fromOutputHandler(_ call: String) -> MediaError {
        MediaError(.invalidState, "\(call) cannot be called from the output handler")
    }

    private static func callName(_ event: Event) -> String {
        switch event {
        case .configure: "configure"
        case .prepare, .prepared, .prepareFailed: "prepare"
        case .run(let call), .use(let call): call
        case .invalidate: "invalidate"
        }
    }
}
