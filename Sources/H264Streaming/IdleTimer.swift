import NIOCore

/// The idle timeout of a receiver — ``RTPReceiver``, ``RTSPClient``'s connection — in one place:
/// `onIdle` runs once nothing was ``heard()`` for `timeout`, measured on the event loop's own
/// clock (`EventLoop.now`), so a test on an `EmbeddedEventLoop` moves time with `advanceTime`
/// instead of waiting. Used on its loop only; ``cancel()`` (or the timeout firing) ends it.
final class IdleTimer {
    private let timeout: TimeAmount
    private let loop: any EventLoop
    private let onIdle: () -> Void
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

    /// Starts counting from now.
    func start() {
        lastHeard = loop.now
        schedule()
    }

    /// Something arrived: the count starts again (no rescheduling: the check looks at this).
    func heard() { lastHeard = loop.now }

    /// Stops the timer; `onIdle` will not run.
    func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }

    /// Checks when the timeout would pass since the last arrival: idle then, or again later.
    private func schedule() {
        scheduled = loop.assumeIsolated().scheduleTask(deadline: max(lastHeard + timeout, loop.now + .milliseconds(1))) { [self] in
            guard scheduled != nil else { return }
            if loop.now - lastHeard >= timeout {
                scheduled = nil
                onIdle()
            } else {
                schedule()
            }
        }
    }
}
