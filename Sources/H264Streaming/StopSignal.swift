import Dispatch
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
    /// returned `cancel` is called.
    public func catchSignals() -> () -> Void {
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in set() }
            source.resume()
            return source
        }
        return { for source in sources { source.cancel() } }
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
