/// The two timeouts of a connection to one of our RTSP servers (``RTSPServer`` and
/// the record server of `h264 receive --listen`): a request that has begun must be complete within
/// `requestTimeout` (then 408 Request Timeout and the connection closes: a client that never
/// finishes its request does not hold a connection), and a connection that sends nothing for
/// `sessionTimeout` (the `timeout` its `Session` header advertises, RFC 2326 clause 12.37)
/// ends. The handler tells it what it read (`heard`) and asks once a second (`expired`).
package struct RTSPConnectionTimeouts {
    /// What ran out.
    package enum Expiry: Equatable {
        /// A request begun more than `requestTimeout` ago is not complete.
        case request
        /// Nothing was heard for `sessionTimeout`.
        case session
    }

    /// A connection that sends nothing for this long ends.
    package var sessionTimeout: Duration
    /// A request that has begun must be complete within this time.
    package var requestTimeout: Duration
    private var lastHeard = ContinuousClock.now
    private var partialSince: ContinuousClock.Instant?

    package init(sessionTimeout: Duration, requestTimeout: Duration) {
        self.sessionTimeout = sessionTimeout
        self.requestTimeout = requestTimeout
    }

    /// Bytes arrived; `hasPartialMessage`: the reader holds the beginning of a message after
    /// taking every complete one.
    package mutating func heard(hasPartialMessage: Bool, at now: ContinuousClock.Instant = .now) {
        lastHeard = now
        partialSince = hasPartialMessage ? (partialSince ?? now) : nil
    }

    /// Which timeout has run out at `now`, if any (the request's first).
    package func expired(at now: ContinuousClock.Instant = .now) -> Expiry? {
        if let partialSince, now - partialSince > requestTimeout { return .request }
        if now - lastHeard > sessionTimeout { return .session }
        return nil
    }
}
