import H264
import NIOCore

extension RTMPPublisher {
    /// Starts a reconnection after `failure` unless one is under way; on the event loop.
    ///
    /// - Returns: false when the publisher has no reconnection policy or its tries ran out (the
    ///   caller throws `failure` then), true while a reconnection is (or was just) started: the
    ///   frame is then dropped.
    func reconnectIfAllowed(after failure: RTMPError) -> Bool {
        guard let policy = configuration.reconnect else { return false }
        return state.withLock { state in
            guard !state.gaveUp else { return false }
            guard state.reconnecting == nil else { return true }
            logger.warning("\(url): \(failure); publishing again after \(policy.initialDelay)")
            state.reconnecting = Task { [self] in await reconnect(policy: policy) }
            return true
        }
    }

    /// Tries new connections with the policy's backoff until one publishes (it replaces the
    /// lost one: `onMetaData` and the sequence header go out again before the next IDR, the AAC
    /// sequence header before the next audio frame), the
    /// tries run out, or ``finish()`` cancels it.
    private func reconnect(policy: Configuration.Reconnect) async {
        let lost = state.withLock { $0.link.channel }
        try? await lost.close()
        var delay = policy.initialDelay
        var attempts = 0
        while !Task.isCancelled {
            attempts += 1
            do {
                try await Task.sleep(for: delay)
            } catch {
                break // finish() cancelled it
            }
            do {
                let link = try await Self.open(url, group: loop, configuration: configuration, logger: logger)
                let installed = state.withLock { state in
                    guard !state.finished else { return false }
                    state.link = link
                    state.timeline.restart(messageStreamId: link.messageStreamId)
                    state.audio.restart()
                    state.metadataSent = false
                    state.reconnecting = nil
                    return true
                }
                guard installed else {
                    try? await link.channel.close()
                    return
                }
                logger.info("\(url): publishing again after \(attempts) attempt(s)")
                return
            } catch {
                logger.info("\(url): reconnection attempt \(attempts) failed: \(error)")
            }
            if let maximum = policy.maximumAttempts, attempts >= maximum { break }
            delay = Swift.min(delay * 2, policy.maximumDelay)
        }
        state.withLock { state in
            state.gaveUp = true
            state.reconnecting = nil
        }
    }
}
