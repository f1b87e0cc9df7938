import H264
import HEVC
import Logging
import NIOCore
import RTP
import RTSPMessages

/// The connection of an ``RTSPClient``, on its event loop: writes requests (with the
/// `Authorization` its `RTSPAuthenticator` builds, a 401 retried as that says), matches answers
/// to them by CSeq (an answer without CSeq to the one request outstanding), sends the keepalive, and turns the RTP packets (interleaved on the RTP channel, or datagrams from
/// the UDP socket, ``receive(packet:)``) into the client's events. Ends the events when the
/// server closes the connection, when nothing arrives for the idle timeout, when the keepalive
/// fails, or at ``end(_:)``; `onEnd` then gets the ending (the client finishes its events, or
/// reconnects). Its RTCP (`RTSPClientRTCP`): sender reports on the RTCP channel (or the RTCP
/// socket, ``receive(rtcp:)``) give the access units their wall-clock time, and receiver reports
/// go out every 5 s. A handler that resumes after a reconnection skips the access units before
/// the first IDR, and announces that one with the gap since the last connection's last.
final class RTSPClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A client's reader: junk a camera sends between messages is skipped (gortsplib#653).
    private var reader = RTSPMessageReader(limits: .init(maximumBodySize: 65_536), resynchronizing: true)
    private var cSeq = 0
    private var pending: [String: EventLoopPromise<RTSPResponse>] = [:]
    private var depacketizer: VideoRTPDepacketizer?
    private let continuation: FrameEventQueue<RTSPClient.Event, Never>
    let state: Locked<RTSPClient.State>
    private let onEnd: (RTSPClient.Ending) -> Void
    /// The counts of the connections before this one, added to this one's in the client's state.
    private let previousStatistics: RTPReceptionStatistics
    /// Closed until the first keyframe after a reconnection: frames before it are skipped.
    var gate: KeyframeGate
    /// After a reconnection, the events held until the client has installed this connection and
    /// announced it (``release(after:)``), so that ``RTSPClient/Event/reconnected(_:)`` comes
    /// before them; nil: events go out as they come.
    private var held: [RTSPClient.Event]?
    /// The session's RTCP: statistics, the last sender report, receiver reports.
    let rtcp = RTSPClientRTCP()
    private let idleTimeout: Duration?
    private let userAgent: String
    let logger: Logger
    private(set) var context: ChannelHandlerContext?
    /// The interleaved channel RTP comes on; nil before SETUP and for UDP.
    var rtpChannel: UInt8?
    /// The interleaved channel RTCP comes and goes on; nil before SETUP and for UDP.
    var rtcpChannel: UInt8?
    private(set) var idleTimer: IdleTimer?
    private var authenticator: RTSPAuthenticator
    private var keepAlive: RTSPClientKeepAlive?
    /// Both tracks' presentation times, on one timeline.
    var timeline: RTSPSessionTimeline
    /// The audio track's depacketizer, once it is set up; nil without audio.
    var audioDepacketizer: AudioRTPDepacketizer?
    /// The audio track's RTCP: its statistics, sender reports and receiver reports.
    let audioRTCP = RTSPClientRTCP()
    /// The interleaved channels of the audio track's RTP and RTCP; nil before its SETUP and for UDP.
    var audioRTPChannel: UInt8?
    var audioRTCPChannel: UInt8?
    /// The first error of the pipeline (a failed TLS handshake, say), which closed the connection.
    private(set) var caughtError: String?
    /// True once an RTP or RTCP packet came (``awaitFirstPacket(within:)``).
    private var heardPacket = false
    private var firstPacketWaiter: EventLoopPromise<Bool>?
    /// How the handler ended; nil while it goes on.
    private(set) var ending: RTSPClient.Ending?
    var ended: Bool { ending != nil }

    /// A handler whose events go to `continuation` and whose ending to `onEnd`; `resuming` (after
    /// a reconnection) skips access units up to the first IDR, and the presentation times go on
    /// from `timelineStart`.
    init(continuation: FrameEventQueue<RTSPClient.Event, Never>, state: Locked<RTSPClient.State>, idleTimeout: Duration?,
         userAgent: String, credentials: RTSPCredentials?, logger: Logger, resuming: Bool = false, timelineStart: Duration = .zero,
         onEnd: @escaping (RTSPClient.Ending) -> Void) {
        self.continuation = continuation
        self.onEnd = onEnd
        gate = KeyframeGate(open: !resuming)
        held = resuming ? [] : nil
        timeline = RTSPSessionTimeline(start: timelineStart)
        previousStatistics = state.withLock { $0.statistics }
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
    func play(with depacketizer: VideoRTPDepacketizer) {
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
            while true {
                // RTP and RTCP straight from the reader's buffer; anything else from next().
                let interleaved = reader.nextInterleavedFrame { (channel, payload) -> Bool in
                    if channel == rtpChannel {
                        receive(packet: payload)
                    } else if channel == rtcpChannel {
                        receive(rtcp: payload)
                    } else if channel == audioRTPChannel {
                        receive(audioPacket: payload)
                    } else if channel == audioRTCPChannel {
                        receive(audioRTCP: payload)
                    }
                    return true
                }
                if interleaved != nil { continue }
                guard let message = try reader.next() else { break }
                switch message {
                case .response(let response):
                    // bluenviron/gortsplib#410, Parrot-Developers/librtsp#2 (the Anafi drone): an
                    // answer without CSeq is the one outstanding request's; with several, nobody's.
                    let key = response.header("CSeq") ?? (pending.count == 1 ? pending.keys.first : nil)
                    if let key, let promise = pending.removeValue(forKey: key) {
                        promise.succeed(response)
                    } else {
                        logger.debug("an answer to no outstanding request (CSeq \(response.header("CSeq") ?? "none")): \(response.status)")
                    }
                case .interleavedFrame:
                    break // Never here: nextInterleavedFrame took it above.
                case .request(let request):
                    // The server's own requests, as FFmpeg's rtsp.c answers them: OPTIONS (a
                    // keepalive some cameras send) with 200, anything else with 501.
                    let status: RTSPStatus = request.method == "OPTIONS" ? .ok : .notImplemented
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: RTSPResponse(status: status, cSeq: request.cSeq).bytes)),
                                          promise: nil)
                case .malformedRequest:
                    break
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
        if caughtError == nil { caughtError = "\(error)" }
        context.close(promise: nil)
    }

    /// One RTP packet: depacketized, and its events delivered.
    func receive(packet: UnsafeRawBufferPointer) {
        guard !ended, depacketizer != nil, let loop = context?.eventLoop else { return }
        heard()
        idleTimer?.heard()
        rtcp.count(packet: packet, at: loop.now)
        depacketizer!.append(packet: packet)
        deliver()
    }

    /// One compound RTCP packet: a sender report of the stream is kept.
    func receive(rtcp packet: UnsafeRawBufferPointer) {
        guard !ended, let loop = context?.eventLoop else { return }
        heard()
        if let problem = rtcp.receive(packet, at: loop.now) { logger.debug("\(problem)") }
        if let report = rtcp.lastSenderReport {
            timeline.senderReport(report, for: .video)
            state.withLock { $0.lastSenderReport = report }
        }
    }

    /// Sends an RTCP receiver report every `interval` through `send`, or on the RTCP
    /// interleaved channel when `send` is nil.
    func startReceiverReports(every interval: Duration, send: (([UInt8]) -> Void)? = nil) {
        guard let context, !ended else { return }
        let channel = rtcpChannel ?? 1
        rtcp.start(every: interval, on: context.eventLoop, send: send ?? { [self] report in
            guard let context = self.context else { return }
            var buffer = context.channel.allocator.buffer(capacity: report.count + 4)
            buffer.writeBytes([UInt8(ascii: "$"), channel, UInt8(report.count >> 8), UInt8(report.count & 0xFF)])
            buffer.writeBytes(report)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        })
    }

    /// True once an RTP or RTCP packet has come, false if none comes within `timeout`; true
    /// also when the handler ends first (its ending then takes its course).
    func awaitFirstPacket(within timeout: Duration) -> EventLoopFuture<Bool> {
        guard let loop = context?.eventLoop else { preconditionFailure("awaitFirstPacket before the handler was added") }
        if heardPacket || ended { return loop.makeSucceededFuture(true) }
        let promise = firstPacketWaiter ?? loop.makePromise(of: Bool.self)
        firstPacketWaiter = promise
        let timer = loop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [self] in
            firstPacketWaiter = nil
            promise.succeed(false)
        }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        return promise.futureResult
    }

    func heard() {
        heardPacket = true
        firstPacketWaiter?.succeed(true)
        firstPacketWaiter = nil
    }

    private func deliver() {
        guard depacketizer != nil else { return }
        var delivered = false
        while let event = depacketizer!.next() {
            delivered = true
            handle(event)
        }
        // The statistics with each event and at the end: not a lock per packet.
        guard delivered || ended, let depacketizer else { return }
        let counted = RTPReceptionStatistics(counting: depacketizer), previous = previousStatistics
        let statistics = RTPReceptionStatistics(packets: previous.packets + counted.packets,
                                                lostPackets: previous.lostPackets + counted.lostPackets,
                                                droppedAccessUnits: previous.droppedAccessUnits + counted.droppedAccessUnits)
        state.withLock { $0.statistics = statistics }
    }

    /// Yields the events of one depacketizer event: after a reconnection, nothing before the
    /// first keyframe (IDR, IRAP), which is announced with the gap. A frame gets its wall-clock
    /// time from RTCP and its presentation time on the client's timeline, which goes on across
    /// reconnections: the first frame after one is the gap after the latest before.
    private func handle(_ event: VideoRTPDepacketizer.Event) {
        switch event {
        case .frame(var received):
            let resuming = !gate.isOpen
            guard gate.admit(received.frame) else { return }
            let now = context?.eventLoop.now
            if resuming, let now, let previous = state.withLock({ state in state.lastArrival.map { (arrival: $0, time: state.lastPresentationTime) } }) {
                // The gap, at least a microsecond, is also the step of the presentation times:
                // they go on after the last ones, never back (a new session's RTP timestamps
                // start anywhere).
                let gap = Swift.max(Duration.nanoseconds((now - previous.arrival).nanoseconds), .microseconds(1))
                timeline = RTSPSessionTimeline(start: previous.time + gap, audioClockRate: audioDepacketizer?.media.clockRate ?? 90_000)
                yield(.resumed(gap: gap))
            }
            received.wallClock = rtcp.wallClock(of: received.timestamp)
            let time = timeline.time(of: received.timestamp, track: .video, arrival: Self.arrival(now))
            received.frame.presentationTime = time
            received.frame.decodeTime = time
            state.withLock { state in
                state.lastPresentationTime = Swift.max(state.lastPresentationTime, time)
                state.lastArrival = now ?? state.lastArrival
            }
            yield(.frame(received))
        case .formatChanged(let format):
            yield(.formatChanged(format))
        case .loss(let loss):
            yield(.loss(loss))
        case .diagnostic(let error):
            yield(.diagnostic(error))
        case .keyframeRequest:
            break // No RTCP feedback is sent.
        }
    }

    /// Yields `first` (the reconnection), then the events held since PLAY; afterwards events go
    /// out as they come. Nothing happens for a handler that holds nothing (not resuming).
    func release(after first: RTSPClient.Event) {
        guard let events = held else { return }
        held = nil
        continuation.yield(first)
        for event in events { continuation.yield(event) }
    }

    /// Hands `event` to the client's events, or holds it until ``release(after:)``.
    func yield(_ event: RTSPClient.Event) {
        if held != nil { held!.append(event) } else { continuation.yield(event) }
    }

    /// Flushes the depacketizer, stops the timers and hands `ending` to `onEnd` (once).
    func end(_ ending: RTSPClient.Ending) {
        guard !ended else { return }
        self.ending = ending
        firstPacketWaiter?.succeed(true)
        firstPacketWaiter = nil
        idleTimer?.cancel()
        stopKeepAlive()
        rtcp.cancel()
        audioRTCP.cancel()
        depacketizer?.finish()
        deliver()
        onEnd(ending)
    }
}
