import Foundation
import H264
import NIOCore
import NIOPosix

/// One RTSP connection of `h264 serve --rtsp`: reads requests with `RTSPMessageReader`, answers
/// them, and while the session plays, turns each Annex-B frame the `Broadcaster` writes to the
/// channel into RTP packets interleaved in the connection (`$`, channel, length, packet).
///
/// One session per connection, RTP over TCP interleaved (`RTP/AVP/TCP`) or over UDP unicast
/// (`RTP/AVP;unicast;client_port=A-B`: sent from a port pair of the server's, `server_port`, to
/// the client's address of the RTSP connection), whichever the client lists first; the session
/// ends with the connection. Timestamps are
/// the 90 kHz time since PLAY at which each frame reaches the connection (the live pacing
/// clock), so RTP-Info's `rtptime` maps exactly to the start of play.
///
/// Answers (RFC 2326 clause 7.1.1): 400 for a malformed request or one without CSeq, 404 for
/// another path than `/live`, 405 (with `Allow`) for the methods of RFC 2326 this server does
/// not allow (ANNOUNCE, RECORD, REDIRECT, SET_PARAMETER), 501 for other methods, 454 for an
/// unknown session, 455 for PLAY or PAUSE before SETUP, 461 for a transport other than unicast
/// RTP/AVP over TCP or over UDP with `client_port`, 500 when no UDP port pair is free, 505 for another version, 414/413 for a request line or body over the limit
/// (then the connection closes: its framing is lost), 408 for a request that does not finish
/// within `requestTimeout` (then it closes). A session that hears nothing (no request, no RTCP)
/// for `sessionTimeout` ends and its connection closes.
final class RTSPConnectionHandler: ChannelDuplexHandler, RTSPServerConnection {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Timeouts and packet size.
    struct Configuration: Sendable {
        /// A session without any request or RTCP for this long ends (advertised in `Session`).
        var sessionTimeout: Duration = .seconds(60)
        /// A request that has begun must be complete within this time.
        var requestTimeout: Duration = .seconds(10)
        /// The largest RTP packet, counted as for UDP over IPv4 (RTP packets interleaved in TCP
        /// need no IP fragmentation, but players' buffers expect the usual sizes).
        var maximumTransmissionUnit = 1400
        /// The kernel send buffer of each connection (`SO_SNDBUF`; nil: the system's), as
        /// `--send-buffer-size` sets it for raw viewers.
        var sendBufferSize: Int?
    }

    /// The methods this server answers.
    static let publicMethods = ["OPTIONS", "DESCRIBE", "SETUP", "PLAY", "PAUSE", "TEARDOWN", "GET_PARAMETER"]

    /// RTP over UDP: the server's RTP and RTCP sockets and where the packets go.
    private struct UDPTransport {
        let rtp: any Channel
        let rtcp: any Channel
        let destination: SocketAddress
        let rtcpDestination: SocketAddress
        func close() {
            rtp.close(promise: nil)
            rtcp.close(promise: nil)
        }
    }

    private struct Session {
        let id: String
        var channels: ClosedRange<Int>
        var udp: UDPTransport?
        var packetizer: RTPPacketizer
        var broadcasterId: Int?
        var playStart = ContinuousClock.now
        var packetsSent: UInt32 = 0
        var octetsSent: UInt32 = 0
        var lastReport: ContinuousClock.Instant?
    }

    private let broadcaster: Broadcaster
    private let format: FormatDescription
    private let configuration: Configuration
    private let logLine: @Sendable (String) -> Void
    var reader = RTSPMessageReader()
    private var session: Session?
    var timeouts: RTSPConnectionTimeouts
    var checkTimer: Scheduled<Void>?
    var closing = false
    /// Set by a PLAY that starts the stream: join the broadcaster once the answer is written.
    private var joinAfterAnswer = false

    init(broadcaster: Broadcaster, format: FormatDescription, configuration: Configuration, log: @escaping @Sendable (String) -> Void) {
        self.broadcaster = broadcaster
        self.format = format
        self.configuration = configuration
        self.timeouts = RTSPConnectionTimeouts(sessionTimeout: configuration.sessionTimeout, requestTimeout: configuration.requestTimeout)
        self.logLine = log
    }

    func log(_ line: String) { logLine(line) }

    // MARK: - Connection

    func channelActive(context: ChannelHandlerContext) {
        scheduleCheck(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopChecks()
        endSession(reason: "connection closed")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or broken connection: the viewer is gone.
        context.close(promise: nil)
    }

    /// Once a second (after the request timeout, `RTSPServerConnection`): the session timeout,
    /// then the sender report if one is due.
    func check(sessionExpired: Bool, context: ChannelHandlerContext) -> Bool {
        guard sessionExpired else {
            sendSenderReportIfDue(context: context)
            return true
        }
        log("RTSP \(address(context)): nothing heard for \(configuration.sessionTimeout): "
            + (session == nil ? "closed" : "session \(session!.id) timed out"))
        endSession(reason: "timed out")
        context.close(promise: nil)
        return false
    }

    /// The session ends before the last answer goes.
    func endBeforeClosing() {
        endSession(reason: "closed")
    }

    /// Every 5 s while playing: an RTCP sender report (RFC 3550 clause 6.4.1) on the RTCP
    /// channel or port, mapping the RTP timestamps to wall-clock time.
    private func sendSenderReportIfDue(context: ChannelHandlerContext) {
        guard var current = session, current.broadcasterId != nil, current.packetsSent > 0 else { return }
        let now = ContinuousClock.now
        if let last = current.lastReport, now - last < .seconds(5) { return }
        current.lastReport = now
        session = current
        let wallClock = Date().timeIntervalSince1970
        let seconds = wallClock.rounded(.down)
        let report = RTCPSenderReport(
            ssrc: current.packetizer.configuration.ssrc,
            ntpTimestamp: RTCPSenderReport.ntpTimestamp(unixSeconds: Int64(seconds), nanoseconds: Int64((wallClock - seconds) * 1e9)),
            rtpTimestamp: current.packetizer.timestamp(for: now - current.playStart),
            packetCount: current.packetsSent, octetCount: current.octetsSent, canonicalName: "h264-serve").bytes
        if let udp = current.udp {
            var buffer = udp.rtcp.allocator.buffer(capacity: report.count)
            buffer.writeBytes(report)
            udp.rtcp.writeAndFlush(AddressedEnvelope(remoteAddress: udp.rtcpDestination, data: buffer), promise: nil)
        } else {
            var buffer = context.channel.allocator.buffer(capacity: report.count + 4)
            buffer.writeInteger(UInt8(ascii: "$"))
            buffer.writeInteger(UInt8(truncatingIfNeeded: current.channels.lowerBound + 1))
            buffer.writeInteger(UInt16(report.count))
            buffer.writeBytes(report)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        }
    }

    // MARK: - Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        read(unwrapInboundIn(data), context: context)
    }

    func handle(_ message: RTSPMessageReader.Message, context: ChannelHandlerContext) {
        switch message {
        case .request(let request):
            if let response = answer(request, context: context) { respond(context: context, response) }
            if joinAfterAnswer, let id = session?.id {
                joinAfterAnswer = false
                let client = broadcaster.add(context.channel)
                session?.broadcasterId = client
                log("RTSP \(address(context)): session \(id) plays as client \(client)")
            }
        case .interleavedFrame:
            break // RTCP receiver reports: they keep the session alive.
        case .response, .malformedRequest:
            break // A client's answer to nothing this server asks; malformed requests are answered by `read`.
        }
    }

    /// The path of an `rtsp://host[:port]/path` URI (or the URI itself when it has no scheme).
    static func path(of uri: String) -> Substring {
        guard let scheme = uri.range(of: "://") else { return Substring(uri) }
        let rest = uri[scheme.upperBound...]
        return rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
    }

    /// The presentation's URI as the client names it, with a trailing `/` (the Content-Base).
    private static func base(of uri: String) -> String {
        let path = path(of: uri)
        let prefix = uri[..<path.startIndex]
        return prefix + "/live/"
    }

    /// The answer to `request`, or nil when it will be sent later (a SETUP binding UDP sockets).
    private func answer(_ request: RTSPRequest, context: ChannelHandlerContext) -> RTSPResponse? {
        let cSeq = request.cSeq
        guard cSeq != nil else {
            log("RTSP \(address(context)): \(request.method) without CSeq")
            return RTSPResponse(status: .badRequest, cSeq: nil)
        }
        guard RTSPRequest.knownMethods.contains(request.method) else {
            return RTSPResponse(status: .notImplemented, cSeq: cSeq)
        }
        guard Self.publicMethods.contains(request.method) else {
            return RTSPResponse(status: .methodNotAllowed, cSeq: cSeq,
                                headers: [("Allow", Self.publicMethods.joined(separator: ", "))])
        }
        let path = Self.path(of: request.uri)
        let isOurs = path == "/live" || path == "/live/" || path == "/live/track1"
        guard isOurs || (request.uri == "*" && ["OPTIONS", "GET_PARAMETER"].contains(request.method)) else {
            return RTSPResponse(status: .notFound, cSeq: cSeq)
        }
        // A named session must be ours.
        if let named = request.session, named != session?.id {
            return RTSPResponse(status: .sessionNotFound, cSeq: cSeq)
        }
        let sessionHeader = session.map { [("Session", "\($0.id);timeout=\(configuration.sessionTimeout.components.seconds)")] } ?? []
        switch request.method {
        case "OPTIONS":
            return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Public", Self.publicMethods.joined(separator: ", "))])
        case "GET_PARAMETER":
            return RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader)
        case "DESCRIBE":
            let base = Self.base(of: request.uri)
            let sdp = SessionDescription(formatDescription: format, sessionName: "h264 serve", address: "0.0.0.0", port: 0).text
                + "a=control:track1\r\n"
            return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Content-Base", base), ("Content-Type", "application/sdp")],
                                body: Array(sdp.utf8))
        case "SETUP":
            return setup(request, cSeq: cSeq, context: context)
        case "PLAY":
            guard session != nil else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
            return play(request, cSeq: cSeq, headers: sessionHeader, context: context)
        case "PAUSE":
            guard session != nil else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
            leaveBroadcast()
            return RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader)
        case "TEARDOWN":
            guard session != nil else { return RTSPResponse(status: .ok, cSeq: cSeq) }
            endSession(reason: "teardown")
            return RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader)
        default:
            return RTSPResponse(status: .notImplemented, cSeq: cSeq)
        }
    }

    private func setup(_ request: RTSPRequest, cSeq: String?, context: ChannelHandlerContext) -> RTSPResponse? {
        guard session?.broadcasterId == nil else {
            // Changing the transport of a playing stream is not supported (clause 10.4 allows refusing it).
            return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq)
        }
        let offered: [RTSPTransport]
        do {
            offered = try RTSPTransport.parseList(request.header("Transport") ?? "")
        } catch {
            log("RTSP \(address(context)): \(error)")
            return RTSPResponse(status: RTSPStatus(for: error), cSeq: cSeq)
        }
        guard var chosen = RTSPTransport.firstUnicastRTP(in: offered, mode: "PLAY") else {
            return RTSPResponse(status: .unsupportedTransport, cSeq: cSeq)
        }
        guard chosen.lowerTransport == .udp else {
            return makeSession(transport: chosen, udp: nil, cSeq: cSeq, context: context)
        }
        guard let clientPorts = chosen.clientPorts, let remote = context.channel.remoteAddress?.ipAddress,
              let local = context.channel.localAddress?.ipAddress,
              let destination = try? SocketAddress(ipAddress: remote, port: clientPorts.lowerBound),
              let rtcpDestination = try? SocketAddress(ipAddress: remote, port: clientPorts.upperBound) else {
            return RTSPResponse(status: .unsupportedTransport, cSeq: cSeq)
        }
        UDPPortPair.bind(host: local, on: context.eventLoop).assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let (rtp, rtcp)):
                guard !closing, context.channel.isActive else {
                    rtp.close(promise: nil)
                    rtcp.close(promise: nil)
                    return
                }
                let port = rtp.localAddress?.port ?? 0
                chosen.serverPorts = port...(port + 1)
                respond(context: context, makeSession(transport: chosen, udp: UDPTransport(rtp: rtp, rtcp: rtcp, destination: destination,
                                                                                      rtcpDestination: rtcpDestination),
                                                      cSeq: cSeq, context: context))
            case .failure(let error):
                log("RTSP \(address(context)): no UDP port pair: \(error)")
                respond(context: context, RTSPResponse(status: .internalServerError, cSeq: cSeq))
            }
        }
        return nil
    }

    /// Sets up (or sets up again) the connection's session with `transport`.
    private func makeSession(transport: RTSPTransport, udp: UDPTransport?, cSeq: String?,
                             context: ChannelHandlerContext) -> RTSPResponse {
        var transport = transport
        session?.udp?.close()
        let packetizer = session?.packetizer
            ?? RTPPacketizer(configuration: .init(maximumTransmissionUnit: configuration.maximumTransmissionUnit))
        let id = session?.id ?? String(UInt64.random(in: 1...UInt64.max), radix: 16, uppercase: true)
        session = Session(id: id, channels: transport.interleavedChannels ?? 0...1, udp: udp, packetizer: packetizer)
        transport.ssrc = packetizer.configuration.ssrc
        log("RTSP \(address(context)): session \(id) set up (\(transport.text))")
        return RTSPResponse(status: .ok, cSeq: cSeq, headers: [
            ("Transport", transport.text),
            ("Session", "\(id);timeout=\(configuration.sessionTimeout.components.seconds)"),
        ])
    }

    private func play(_ request: RTSPRequest, cSeq: String?, headers: [(name: String, value: String)],
                      context: ChannelHandlerContext) -> RTSPResponse {
        guard var current = session else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
        if current.broadcasterId == nil {
            current.playStart = .now
            session = current
        }
        let rtpInfo = "url=\(Self.base(of: request.uri))track1;seq=\(current.packetizer.nextSequenceNumber);"
            + "rtptime=\(current.packetizer.timestamp(for: .zero))"
        let response = RTSPResponse(status: .ok, cSeq: cSeq, headers: headers + [("Range", "npt=0.000-"), ("RTP-Info", rtpInfo)])
        // The answer goes out first; the frames (written through the channel, after it) follow.
        joinAfterAnswer = current.broadcasterId == nil
        return response
    }

    private func leaveBroadcast() {
        if let id = session?.broadcasterId { broadcaster.remove(id) }
        session?.broadcasterId = nil
    }

    private func endSession(reason: String) {
        leaveBroadcast()
        session?.udp?.close()
        if let session { log("RTSP session \(session.id) ended (\(reason))") }
        session = nil
    }

    // MARK: - Frames

    /// A frame from the broadcaster (Annex-B bytes of one access unit): sent as interleaved RTP
    /// while the session plays, dropped otherwise. Writes of this handler's own answers do not
    /// come here (they start at this handler).
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        guard frame.readableBytes > 0 else {
            context.write(data, promise: promise) // the broadcaster's flush marker
            return
        }
        guard var current = session, current.broadcasterId != nil else {
            promise?.succeed(())
            return
        }
        let avcc: [UInt8]
        do {
            avcc = try AVCC.fromAnnexB(Array(frame.readableBytesView)).data
        } catch {
            promise?.fail(error)
            return
        }
        if let udp = current.udp {
            var datagrams: [AddressedEnvelope<ByteBuffer>] = []
            do {
                try packetize(avcc, in: &current) { packet in
                    var buffer = udp.rtp.allocator.buffer(capacity: packet.byteCount)
                    buffer.writeBytes(packet.prefix)
                    buffer.writeBytes(packet.payload)
                    datagrams.append(AddressedEnvelope(remoteAddress: udp.destination, data: buffer))
                }
            } catch {
                promise?.fail(error)
                return
            }
            // The frame is done when its last datagram is (the sockets share this event loop).
            for (index, datagram) in datagrams.enumerated() {
                udp.rtp.write(datagram, promise: index == datagrams.count - 1 ? promise : nil)
            }
            udp.rtp.flush()
            if datagrams.isEmpty { promise?.succeed(()) }
            return
        }
        var output = context.channel.allocator.buffer(capacity: avcc.count + avcc.count / 64 + 64)
        let channel = UInt8(truncatingIfNeeded: current.channels.lowerBound)
        do {
            try packetize(avcc, in: &current) { packet in
                output.writeInteger(UInt8(ascii: "$"))
                output.writeInteger(channel)
                output.writeInteger(UInt16(packet.byteCount))
                output.writeBytes(packet.prefix)
                output.writeBytes(packet.payload)
            }
        } catch {
            promise?.fail(error)
            return
        }
        context.write(wrapOutboundOut(output), promise: promise)
    }

    /// Packetizes one access unit for `current` (time since its PLAY) into `send`, counts the
    /// packets and payload octets for its sender reports, and stores the session.
    private func packetize(_ avcc: [UInt8], in current: inout Session, _ send: (RTPPacketizer.Packet) -> Void) throws {
        var packets: UInt32 = 0, octets: UInt32 = 0
        try current.packetizer.packetize(avcc: avcc, presentationTime: ContinuousClock.now - current.playStart,
                                         formatDescription: format) { packet in
            packets &+= 1
            octets &+= UInt32(truncatingIfNeeded: packet.byteCount - RTPHeader.fixedSize)
            send(packet)
        }
        current.packetsSent &+= packets
        current.octetsSent &+= octets
        session = current
    }
}
