import Dispatch
import MediaCore
import Synchronization // Atomic: a flag read by the pacing loop, set from a signal handler
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A stop asked for (SIGINT, SIGTERM): a flag a live loop reads (``FramePacer/run(encoder:nextFrame:isStopped:)``'s
/// `isStopped`), and a ``Doorbell`` rung so that a loop asleep until its next frame looks at the
/// flag at once. The one way the `h264` tool and the examples turn a signal into a graceful
/// shutdown: servers shut down, viewers get their connections closed, the exit status is 0.
public final class StopSignal: Sendable {
    private let flag = Atomic<Bool>(false)
    private let doorbell: Doorbell

    /// A stop not yet asked for; ``set()`` rings `doorbell`.
    public init(doorbell: Doorbell) { self.doorbell = doorbell }

    /// True once a stop was asked for.
    public var isSet: Bool { flag.load(ordering: .acquiring) }

    /// Asks for a stop.
    public func set() {
        flag.store(true, ordering: .releasing)
        doorbell.ring()
    }

    /// Turns SIGINT and SIGTERM into ``set()`` (instead of ending the process) until the
    /// returned `cancel` is called. Catching may start and end any number of times, one after
    /// another or overlapping (each stop signal that catches at the time is set); a signal
    /// while none catches ends the process as it would have without any.
    public func catchSignals() -> () -> Void {
        let id = SignalRouter.shared.add(self)
        return { SignalRouter.shared.remove(id) }
    }

    /// Runs `body` with SIGINT and SIGTERM caught: a signal meanwhile runs `onStop` (which
    /// should make `body` return, e.g. by shutting its server down), once.
    ///
    /// - Parameters:
    ///   - isolation: the caller's actor, where `body` runs.
    ///   - onStop: what a signal runs (once), concurrently with `body`.
    ///   - body: the work a signal should end.
    /// - Returns: what `body` returns.
    public static func catching<T>(isolation: isolated (any Actor)? = #isolation, onStop: @escaping @Sendable () async -> Void,
                                   _ body: () async throws -> T) async throws -> T {
        let doorbell = Doorbell()
        let stop = StopSignal(doorbell: doorbell)
        let stopCatching = stop.catchSignals()
        let watcher = Task {
            while !stop.isSet && !Task.isCancelled { await doorbell.sleep(until: .now + .seconds(3600)) }
            if stop.isSet { await onStop() }
        }
        defer { stopCatching(); watcher.cancel(); doorbell.ring() }
        return try await body()
    }
}

/// The process's one handler of SIGINT and SIGTERM: installed once, for the life of the
/// process, it hands each signal to the ``StopSignal``s catching at the time. (A dispatch signal
/// source per catch did not survive a second one: each set SIG_IGN, which on Linux replaced the
/// handler libdispatch installs only for a signal's first source, and the next catch never
/// heard the signal.)
private final class SignalRouter: Sendable {
    static let shared = SignalRouter()

    private let catchers = Locked((next: 0, stops: [Int: StopSignal]()))
    /// The dispatch sources, kept for the life of the process.
    /// `nonisolated(unsafe)`: set once in `init` and never read or changed after (held only to
    /// keep the sources alive); a dispatch source is thread-safe but not marked `Sendable`.
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]

    private init() {
        let catchers = self.catchers
        sources = [SIGINT, SIGTERM].map { number in
            // Ignored until the source takes it, unless a handler is there already: on Linux
            // the first dispatch source of a signal installs libdispatch's handler, once per
            // process, and setting SIG_IGN over it would leave the signal ignored for good.
            var current = sigaction()
            if sigaction(number, nil, &current) == 0 && current.__sigaction_handler.sa_handler == nil {
                signal(number, SIG_IGN)
            }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let stops = catchers.withLock { Array($0.stops.values) }
                guard !stops.isEmpty else {
                    // Nobody catches: what the signal would have done (the exit status a shell
                    // gives it, should the signal stay blocked on this thread).
                    signal(number, SIG_DFL)
                    raise(number)
                    exit(128 + number)
                }
                for stop in stops { stop.set() }
            }
            source.resume()
            return source
        }
    }

    /// Hands later signals to `stop` too; returns the number ``remove(_:)`` takes.
    func add(_ stop: StopSignal) -> Int {
        catchers.withLock { state in
            state.next += 1
            state.stops[state.next] = stop
            return state.next
        }
    }

    /// Stops handing signals to the stop signal that `add` numbered `id`.
    func remove(_ id: Int) {
        _ = catchers.withLock { $0.stops.removeValue(forKey: id) }
    }
}
