import NIOCore

/// The idle timeout of a receiver — ``RTPReceiver``, ``RTSPClient``'s connection — in one place:
/// `onIdle` runs once nothing was ``heard()`` for `timeout`, measured on the event loop's own
/// clock (`EventLoop.now`), so a test on an `EmbeddedEventLoop` moves time with `advanceTime`
/// instead of waiting. Used on its loop only; ``cancel()`` (or the timeout firing) ends it.
///
/// Its owner usually makes `onIdle` capture itself (`{ [self] in end(.idle) }`), so the owner
/// and the timer hold each other: ``cancel()`` lets go of `onIdle`, which breaks that cycle —
/// without it every ended connection of a reconnecting ``RTSPClient`` stayed in memory, its
/// depacketizer and buffers with it.
final class IdleTimer {
    private let timeout: TimeAmount
    private let loop: any EventLoop
    /// Nil once cancelled: the owner it captures is let go.
    private var onIdle: (() -> Void)?
    private var lastHeard: NIODeadline
    private var scheduled: Scheduled<Void>?

    /// A timer for `timeout` on `loop` (nil when there is no timeout), not yet started.
    init?(timeout: Duration?, loop: any EventLoop, onIdle: @escaping () -> Void) {
        guard let timeout else { return nil }
        self.timeout = TimeAmount(timeout)
        self.loop = loop
        self.onIdle = onIdle
        lastHeard = loop.now
    }

    /// Starts counting from now (not after ``cancel()``).
    func start() {
        guard onIdle != nil else { return }
        lastHeard = loop.now
        schedule()
    }

    /// Something arrived: the count starts again (no rescheduling: the check looks at this).
    func heard() { lastHeard = loop.now }

    /// Stops the timer for good and lets go of `onIdle` (and what it captures); it will not run.
    func cancel() {
        scheduled?.cancel()
        scheduled = nil
        onIdle = nil
    }

    /// Checks when the timeout would pass since the last arrival: idle then, or again later.
    private func schedule() {
        scheduled = loop.assumeIsolated().scheduleTask(deadline: max(lastHeard + timeout, loop.now + .milliseconds(1))) { [self] in
            guard scheduled != nil else { return }
            if loop.now - lastHeard >= timeout {
                scheduled = nil
                let onIdle = self.onIdle
                onIdle?()
            } else {
                schedule()
            }
        }
    }
}
