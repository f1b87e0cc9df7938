import H264
import Logging
import NIOCore

/// The connection of an ``RTSPClient``, on its event loop: writes requests (with the
/// `Authorization` its ``RTSPAuthenticator`` builds, a 401 retried as that says), matches answers
/// to them by CSeq, sends the keepalive, and turns the RTP packets (interleaved on the RTP channel, or datagrams from
/// the UDP socket, ``receive(packet:)``) into the client's events. Ends the events when the
/// server closes the connection, when nothing arrives for the idle timeout, when the keepalive
/// fails, or at ``end(_:)``.
final class RTSPClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A client's reader: junk a camera sends between messages is skipped (gortsplib#653).
    private var reader = RTSPMessageReader(limits: .init(maximumBodySize: 65_536), resynchronizing: true)
    private var cSeq = 0
    private var pending: [String: EventLoopPromise<RTSPResponse>] = [:]
    private var depacketizer: RTPDepacketizer?
    private let continuation: AsyncStream<RTSPClient.Event>.Continuation
    private let state: Locked<RTSPClient.State>
    private let idleTimeout: Duration?
    private let userAgent: String
    private let logger: Logger
    private var context: ChannelHandlerContext?
    /// The interleaved channel RTP comes on; nil before SETUP and for UDP.
    var rtpChannel: UInt8?
    private var idleTimer: IdleTimer?
    private var authenticator: RTSPAuthenticator
    private var keepAlive: RTSPClientKeepAlive?
    private var timeline = RTPTimeline()
    private(set) var ended = false

    init(continuation: AsyncStream<RTSPClient.Event>.Continuation, state: Locked<RTSPClient.State>, idleTimeout: Duration?,
         userAgent: String, credentials: RTSPCredentials?, logger: Logger) {
        self.continuation = continuation
        authenticator = RTSPAuthenticator(credentials: credentials)
        self.state = state
        self.idleTimeout = idleTimeout
        self.userAgent = userAgent
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Writes a request, with credentials once a 401 asked for them; the future is its answer
    /// (any status but a final 401, which fails it with ``RTSPClientError/Code/unauthorized``),
    /// failed too when the connection closes first or no answer comes within `timeout`.
    func request(_ method: String, uri: String, headers: [(name: String, value: String)], timeout: Duration,
                 on loop: any EventLoop) -> EventLoopFuture<RTSPResponse> {
        attempt(method, uri: uri, headers: headers, timeout: timeout, on: loop, retriedStale: false)
    }

    /// One try of ``request(_:uri:headers:timeout:on:)``: a 401 leads to one more when the
    /// authenticator says so.
    private func attempt(_ method: String, uri: String, headers: [(name: String, value: String)], timeout: Duration,
                         on loop: any EventLoop, retriedStale: Bool) -> EventLoopFuture<RTSPResponse> {
        let authorization = authenticator.authorization(method: method, uri: uri)
        let sent = send(method, uri: uri, headers: headers + (authorization.map { [("Authorization", $0)] } ?? []),
                        timeout: timeout, on: loop)
        return sent.assumeIsolated().flatMap { [self] answer in
            guard answer.status.code == 401 else { return loop.makeSucceededFuture(answer) }
            let challenges = answer.headers.filter { $0.name.lowercased() == "www-authenticate" }
                .flatMap { RTSPAuthenticationChallenge.parse($0.value) }
            switch authenticator.unauthorized(by: challenges, sentAuthorization: authorization != nil, retriedStale: retriedStale) {
            case .retry:
                return attempt(method, uri: uri, headers: headers, timeout: timeout, on: loop, retriedStale: authorization != nil)
            case .fail(let message):
                return loop.makeFailedFuture(RTSPClientError(.unauthorized, "\(method) \(uri): \(message)", status: answer.status))
            }
        }.nonisolated()
    }

    /// Writes a request; the future is its answer (any status), failed when the connection
    /// closes first or no answer comes within `timeout`.
    private func send(_ method: String, uri: String, headers: [(name: String, value: String)], timeout: Duration,
              on loop: any EventLoop) -> EventLoopFuture<RTSPResponse> {
        guard let context, !ended || method == "TEARDOWN", context.channel.isActive else {
            return loop.makeFailedFuture(RTSPClientError(.connectionClosed, "\(method) \(uri): the server closed the connection"))
        }
        cSeq += 1
        let key = String(cSeq)
        let request = RTSPRequest(method: method, uri: uri, headers: [("CSeq", key), ("User-Agent", userAgent)] + headers)
        let promise = loop.makePromise(of: RTSPResponse.self)
        pending[key] = promise
        let timer = loop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [self] in
            pending.removeValue(forKey: key)?.fail(RTSPClientError(.timeout, "\(method) \(uri): no answer within \(timeout)"))
        }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        var buffer = context.channel.allocator.buffer(capacity: 256)
        buffer.writeBytes(request.bytes)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        return promise.futureResult
    }

    /// Starts depacketizing with `depacketizer` and the idle timeout.
    func play(with depacketizer: RTPDepacketizer) {
        self.depacketizer = depacketizer
        guard let loop = context?.eventLoop else { return }
        idleTimer = IdleTimer(timeout: idleTimeout, loop: loop) { [self] in end(.idle) }
        idleTimer?.start()
    }

    /// Sends `method` (GET_PARAMETER or OPTIONS) on `uri` with the `Session` every `interval`;
    /// a reply missing for `timeout`, or other than 2xx, ends the events
    /// (``RTSPClient/Ending/keepAliveFailed(_:)``) and closes the connection.
    func startKeepAlive(every interval: Duration, method: String, uri: String, session: String, timeout: Duration) {
        guard let loop = context?.eventLoop, !ended else { return }
        keepAlive = RTSPClientKeepAlive(interval: interval, request: "\(method) \(uri)", loop: loop) { [self] in
            request(method, uri: uri, headers: [("Session", session)], timeout: timeout, on: loop)
        } onFailure: { [self] error in
            logger.debug("the keepalive failed: \(error)")
            end(.keepAliveFailed(error))
            context?.close(promise: nil)
        }
        keepAlive?.start()
    }

    /// Stops the keepalive (before TEARDOWN).
    func stopKeepAlive() {
        keepAlive?.cancel()
        keepAlive = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reader.append(unwrapInboundIn(data).readableBytesView)
        do {
            while let message = try reader.next() {
                switch message {
                case .response(let response):
                    if let key = response.header("CSeq") { pending.removeValue(forKey: key)?.succeed(response) }
                case .interleavedFrame(let channel, let payload):
                    if channel == rtpChannel { payload.withUnsafeBytes { receive(packet: $0) } }
                case .request, .malformedRequest:
                    break // The server's own requests (OPTIONS, ANNOUNCE) are not answered.
                }
            }
        } catch {
            logger.info("the server's RTSP is malformed: \(error)")
            end(.serverClosed)
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let error = RTSPClientError(.connectionClosed, "the server closed the connection")
        for promise in pending.values { promise.fail(error) }
        pending = [:]
        end(.serverClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// One RTP packet: depacketized, and its events delivered.
    func receive(packet: UnsafeRawBufferPointer) {
        guard !ended, depacketizer != nil else { return }
        idleTimer?.heard()
        depacketizer!.append(packet: packet)
        deliver()
    }

    private func deliver() {
        guard var depacketizer else { return }
        while let event = depacketizer.next() {
            switch event {
            case .accessUnit(let unit):
                if unit.accessUnit.formatChanged, let format = unit.accessUnit.formatDescription {
                    continuation.yield(.formatChange(format))
                }
                continuation.yield(.accessUnit(unit, presentationTime: timeline.time(of: unit.timestamp)))
            case .loss(let loss):
                continuation.yield(.loss(loss))
            case .diagnostic(let error):
                continuation.yield(.diagnostic(error))
            case .keyframeRequest:
                break // No RTCP feedback is sent.
            }
        }
        self.depacketizer = depacketizer
        let statistics = RTPReceptionStatistics(counting: depacketizer)
        state.withLock { $0.statistics = statistics }
    }

    /// Flushes the depacketizer and ends the events with `ending`.
    func end(_ ending: RTSPClient.Ending) {
        guard !ended else { return }
        ended = true
        idleTimer?.cancel()
        stopKeepAlive()
        depacketizer?.finish()
        deliver()
        state.withLock { $0.ending = $0.ending ?? ending }
        continuation.finish()
    }
}

/// RTP timestamps (90 kHz, wrapping at 2³²) as the time since the first one: each step taken as
/// the shortest way round (RFC 3550 clause 5.1), so the time goes on across a wrap.
struct RTPTimeline {
    private var last: UInt32?
    private var ticks: Int64 = 0

    /// The presentation time of `timestamp`.
    mutating func time(of timestamp: UInt32) -> Duration {
        if let last { ticks += Int64(Int32(bitPattern: timestamp &- last)) }
        last = timestamp
        return .nanoseconds(ticks * 1_000_000_000 / 90_000)
    }
}
