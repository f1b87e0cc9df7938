import H264
import Logging
import NIOCore

extension RTSPClient {
    /// A connection's handler ended (on the loop): without ``Configuration/reconnect`` or at
    /// ``close()``, the events end; otherwise (the idle timeout too) ``Event/disconnected(_:)``
    /// and a reconnection starts. The ending of a handler not (or no longer) installed is ignored.
    func connectionEnded(_ ending: Ending, generation: Int) {
        enum Next { case ignore, finish, reconnect(RTSPClientConnection, Configuration.Reconnect) }
        let next = state.withLock { state -> Next in
            guard generation == state.installedGeneration, let connection = state.connection else { return .ignore }
            guard state.closing == nil, ending != .closed, let policy = configuration.reconnect else {
                state.ending = state.ending ?? ending
                return .finish
            }
            state.disconnections += 1
            return .reconnect(connection, policy)
        }
        switch next {
        case .ignore:
            return
        case .finish:
            continuation.finish()
        case .reconnect(let connection, let policy):
            logger.debug("\(connection.url): \(ending); reconnecting")
            continuation.yield(.disconnected(ending))
            let task = Task { await self.reconnect(after: ending, closing: connection, policy: policy) }
            state.withLock { $0.reconnecting = task }
        }
    }

    /// Closes the lost connection (a silent one after a TEARDOWN, awaited for the teardown
    /// timeout, so that a camera with few sessions frees this one), then tries new ones with an
    /// exponential backoff until one plays (``Event/reconnected(_:)``), the tries run out (the
    /// events end with `ending`), or the task is cancelled (``close()``).
    private func reconnect(after ending: Ending, closing lost: RTSPClientConnection, policy: Configuration.Reconnect) async {
        if ending == .idle {
            await lost.close(ending: .idle, teardownTimeout: configuration.teardownTimeout, logger: logger)
        } else {
            await lost.closeChannels()
        }
        let clock = ContinuousClock(), started = clock.now
        var delay = policy.initialDelay
        var attempts = 0
        while !Task.isCancelled {
            attempts += 1
            do {
                try await Task.sleep(for: delay, clock: clock)
            } catch {
                return // cancelled: close() ends the events
            }
            do {
                let connection = try await connect(resuming: true)
                guard try await install(connection, reconnection: Reconnection(attempts: attempts, downtime: clock.now - started)) else {
                    return
                }
                logger.debug("\(connection.url): reconnected after \(attempts) attempt(s)")
                return
            } catch {
                logger.info("\(requestedURL): reconnection attempt \(attempts) failed: \(error)")
            }
            if let maximum = policy.maximumAttempts, attempts >= maximum {
                state.withLock { $0.ending = $0.ending ?? ending }
                continuation.finish()
                return
            }
            delay = Swift.min(delay * 2, policy.maximumDelay)
        }
    }

    /// Ends the session: a reconnection under way is stopped, then TEARDOWN (its answer awaited
    /// for the teardown timeout; a failure is logged), the connection and the UDP sockets close
    /// and the events end (``Ending/closed`` unless they had ended already). Safe to call more
    /// than once and from several tasks: every call returns once the one closing is done.
    public func close() async {
        let closing = state.withLock { state in
            if let closing = state.closing { return closing }
            let closing = Task { await self.teardownAndClose() }
            state.closing = closing
            return closing
        }
        await closing.value
    }

    /// Stops reconnecting, TEARDOWN, then everything closes and the events end.
    private func teardownAndClose() async {
        let reconnecting = state.withLock { $0.reconnecting }
        reconnecting?.cancel()
        await reconnecting?.value
        if let connection = state.withLock({ $0.connection }) {
            await connection.close(ending: .closed, teardownTimeout: configuration.teardownTimeout, logger: logger)
        }
        state.withLock { $0.ending = $0.ending ?? .closed }
        continuation.finish()
    }
}
