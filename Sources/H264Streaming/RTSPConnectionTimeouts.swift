package import NIOCore

/// The two timeouts of a connection to one of our RTSP servers (``RTSPServer`` and
/// ``RTSPRecordServer``): a request that has begun must be complete within `requestTimeout`
/// (then 408 Request Timeout and the connection closes: a client that never finishes its
/// request does not hold a connection), and a connection that sends nothing for
/// `sessionTimeout` (the `timeout` its `Session` header advertises, RFC 2326 clause 12.37)
/// ends. The handler tells it when the connection began and what it read (`heard`), and asks
/// at each check (`expired`), always with its event loop's time — so a test on
/// `EmbeddedEventLoop` moves the clock itself.
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
    private var lastHeard: NIODeadline?
    private var partialSince: NIODeadline?

    package init(sessionTimeout: Duration, requestTimeout: Duration) {
        self.sessionTimeout = sessionTimeout
        self.requestTimeout = requestTimeout
    }

    /// The connection began at `now` (nothing heard yet counts from here).
    package mutating func begin(at now: NIODeadline) {
        lastHeard = now
    }

    /// Bytes arrived at `now`; `hasPartialMessage`: the reader holds the beginning of a message
    /// after taking every complete one.
    package mutating func heard(hasPartialMessage: Bool, at now: NIODeadline) {
        lastHeard = now
        partialSince = hasPartialMessage ? (partialSince ?? now) : nil
    }

    /// Which timeout has run out at `now`, if any (the request's first).
    package func expired(at now: NIODeadline) -> Expiry? {
        if let partialSince, now - partialSince > TimeAmount(requestTimeout) { return .request }
        if let lastHeard, now - lastHeard > TimeAmount(sessionTimeout) { return .session }
        return nil
    }
}
