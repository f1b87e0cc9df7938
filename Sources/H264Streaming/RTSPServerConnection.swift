package import H264
package import NIOCore
package import RTSPMessages

/// The request preamble of an RTSP server connection (`RTSPConnectionHandler`, in play and
/// record mode alike): reading messages while keeping the timeouts, answering malformed
/// requests, the once-a-second timeout check from activation until the connection closes, and
/// writing answers. The handler answers the requests themselves, and says what its check does
/// when a timeout runs out.
package protocol RTSPServerConnection: AnyObject {
    var reader: RTSPMessageReader { get set }
    var timeouts: RTSPConnectionTimeouts { get set }
    var checkTimer: Scheduled<Void>? { get set }
    /// True once the connection is closing: nothing more is read.
    var closing: Bool { get set }
    /// How often the timeouts are checked (a second unless the handler says otherwise).
    var checkInterval: Duration { get }

    func log(_ line: String)
    /// A request, an interleaved frame or a response read from the connection (malformed
    /// requests are answered by ``read(_:context:)``).
    func handle(_ message: RTSPMessageReader.Message, context: ChannelHandlerContext)
    /// The check once a second (after the request timeout, which answers 408 and closes):
    /// `sessionExpired` when nothing was heard for the session timeout; false when the
    /// connection is closing (no further check).
    func check(sessionExpired: Bool, context: ChannelHandlerContext) -> Bool
    /// Called before a last answer closes the connection (its framing lost, or a request
    /// timeout).
    func endBeforeClosing()
}

extension RTSPServerConnection {
    /// Once a second.
    package var checkInterval: Duration { .seconds(1) }

    /// Reads received bytes: each message to ``handle(_:context:)``, a malformed request
    /// answered with its status, lost framing answered and the connection closed.
    package func read(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        guard !closing else { return }
        reader.append(bytes.readableBytesView)
        do {
            while !closing, let message = try reader.next() {
                if case .malformedRequest(let error, let cSeq) = message {
                    log("RTSP \(address(context)): \(error)")
                    respond(context: context, RTSPResponse(status: RTSPStatus(for: error), cSeq: cSeq))
                } else {
                    handle(message, context: context)
                }
            }
        } catch {
            log("RTSP \(address(context)): \(error); closing the connection")
            respondAndClose(context: context, RTSPResponse(status: RTSPStatus(for: error), cSeq: nil))
            return
        }
        timeouts.heard(hasPartialMessage: reader.hasPartialMessage, at: context.eventLoop.now)
    }

    /// At activation: the timeouts count from now, and the checks begin.
    package func startChecks(context: ChannelHandlerContext) {
        timeouts.begin(at: context.eventLoop.now)
        scheduleCheck(context: context)
    }

    /// Schedules the check every ``checkInterval``: a request not finished within the
    /// request timeout gets 408 and the connection closes; then ``check(sessionExpired:context:)``.
    /// It goes on until the connection closes or ``stopChecks()``.
    package func scheduleCheck(context: ChannelHandlerContext) {
        checkTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(checkInterval)) { [self] in
            let expiry = timeouts.expired(at: context.eventLoop.now)
            if expiry == .request {
                log("RTSP \(address(context)): request not finished within \(timeouts.requestTimeout): closed")
                respondAndClose(context: context, RTSPResponse(status: .requestTimeout, cSeq: nil))
                return
            }
            if check(sessionExpired: expiry == .session, context: context) { scheduleCheck(context: context) }
        }
    }

    /// Stops the check (the connection closed).
    package func stopChecks() {
        checkTimer?.cancel()
        checkTimer = nil
    }

    /// The peer's address, for the log.
    package func address(_ context: ChannelHandlerContext) -> String {
        context.channel.remoteAddress.map { "\($0)" } ?? "?"
    }

    /// Writes `response`.
    package func respond(context: ChannelHandlerContext, _ response: RTSPResponse) {
        var buffer = context.channel.allocator.buffer(capacity: 256)
        buffer.writeBytes(response.bytes)
        context.writeAndFlush(NIOAny(buffer), promise: nil)
    }

    /// Writes `response` as the last answer, then closes the connection.
    package func respondAndClose(context: ChannelHandlerContext, _ response: RTSPResponse) {
        closing = true
        endBeforeClosing()
        var buffer = context.channel.allocator.buffer(capacity: 256)
        buffer.writeBytes(response.bytes)
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// What every request gets before its method is looked at, the same in PLAY and RECORD
    /// mode (RFC 2326 clause 7.1.1): 400 without CSeq, 501 for an unknown method, 405 (with
    /// `Allow`) for one of RFC 2326 this mode does not allow, 404 for another path (`isOurs`
    /// false; `*` is ours for OPTIONS and GET_PARAMETER), 454 naming another session than
    /// `sessionID`; and the answers to OPTIONS (`Public`) and GET_PARAMETER (a keepalive). Nil:
    /// the handler answers the request itself.
    package func commonAnswer(to request: RTSPRequest, allowed methods: [String], isOurs: Bool, sessionID: String?,
                              sessionHeader: [(name: String, value: String)], context: ChannelHandlerContext) -> RTSPResponse? {
        guard let cSeq = request.cSeq else {
            log("RTSP \(address(context)): \(request.method) without CSeq")
            return RTSPResponse(status: .badRequest, cSeq: nil)
        }
        guard RTSPRequest.knownMethods.contains(request.method) else { return RTSPResponse(status: .notImplemented, cSeq: cSeq) }
        guard methods.contains(request.method) else {
            return RTSPResponse(status: .methodNotAllowed, cSeq: cSeq, headers: [("Allow", methods.joined(separator: ", "))])
        }
        guard isOurs || (request.uri == "*" && ["OPTIONS", "GET_PARAMETER"].contains(request.method)) else {
            return RTSPResponse(status: .notFound, cSeq: cSeq)
        }
        // A named session must be this connection's.
        if let named = request.session, named != sessionID { return RTSPResponse(status: .sessionNotFound, cSeq: cSeq) }
        switch request.method {
        case "OPTIONS": return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Public", methods.joined(separator: ", "))])
        case "GET_PARAMETER": return RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader)
        default: return nil
        }
    }
}

/// A new session id (RFC 2326 clause 12.37): 64 random bits in hexadecimal.
package func makeRTSPSessionID() -> String {
    String(UInt64.random(in: 1...UInt64.max), radix: 16, uppercase: true)
}
