import Foundation
import H264
import Logging
import NIOCore
import NIOPosix

/// One RTSP connection of an ``RTSPServer``: reads requests with `RTSPMessageReader`, answers
/// them, and while the session plays, turns each AVCC access unit its mount's ``Broadcaster``
/// writes to the channel into RTP packets (interleaved in the connection: `$`, channel,
/// length, packet; or datagrams from its UDP port pair).
///
/// One session per connection, RTP over TCP interleaved (`RTP/AVP/TCP`) or over UDP unicast
/// (`RTP/AVP;unicast;client_port=A-B`: sent from a port pair of the server's, `server_port`, to
/// the client's address of the RTSP connection), whichever the client lists first; the session
/// ends with the connection. Timestamps follow the frames' presentation times
/// (``LiveFrame/presentationTime``), anchored at the arrival of the first frame since PLAY, so
/// RTP-Info's `rtptime` maps exactly to the start of play (`RTSPPlayClock`); frames without one
/// are stamped with the time since PLAY at which they reach the connection.
///
/// Answers (RFC 2326 clause 7.1.1): 400 for a malformed request or one without CSeq, 404 for
/// a path nothing is mounted at, 405 (with `Allow`) for the methods of RFC 2326 this server does
/// not allow (ANNOUNCE, RECORD, REDIRECT, SET_PARAMETER), 501 for other methods, 454 for an
/// unknown session, 455 for PLAY or PAUSE before SETUP, 461 for a transport other than unicast
/// RTP/AVP over TCP or over UDP with `client_port`, 500 when no UDP port pair is free, 505 for another version, 414/413 for a request line or body over the limit
/// (then the connection closes: its framing is lost), 408 for a request that does not finish
/// within `requestTimeout` (then it closes). A session that hears nothing (no request, no RTCP)
/// for `sessionTimeout` ends and its connection closes.
final class RTSPConnectionHandler: ChannelDuplexHandler, RTSPServerConnection {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = BroadcastWrite
    typealias OutboundOut = ByteBuffer

    /// The methods this server answers.
    static let publicMethods = ["OPTIONS", "DESCRIBE", "SETUP", "PLAY", "PAUSE", "TEARDOWN", "GET_PARAMETER"]

    /// RTP over UDP: the server's RTP and RTCP sockets and where the packets go.
    struct UDPTransport {
        let rtp: any Channel
        let rtcp: any Channel
        let destination: SocketAddress
        let rtcpDestination: SocketAddress
        func close() {
            rtp.close(promise: nil)
            rtcp.close(promise: nil)
        }
    }

    struct Session {
        let id: String
        /// The stream set up (its path, broadcaster and format).
        let mountPath: String
        let mount: RTSPMounts.Mount
        var channels: ClosedRange<Int>
        var udp: UDPTransport?
        var packetizer: RTPPacketizer
        var broadcasterId: Int?
        /// The RTP clock since PLAY (the frames' media clock when they carry presentation times).
        var clock = RTSPPlayClock(playStart: .now)
        var packetsSent: UInt32 = 0
        var octetsSent: UInt32 = 0
        var lastReport: ContinuousClock.Instant?
    }

    private let mounts: RTSPMounts
    let configuration: RTSPServer.Configuration
    private let logger: Logger
    var reader = RTSPMessageReader()
    var session: Session?
    var timeouts: RTSPConnectionTimeouts
    var checkTimer: Scheduled<Void>?
    var closing = false
    /// Set by a PLAY that starts the stream: join the broadcaster once the answer is written.
    private var joinAfterAnswer = false

    init(mounts: RTSPMounts, configuration: RTSPServer.Configuration, logger: Logger) {
        self.mounts = mounts
        self.configuration = configuration
        self.timeouts = RTSPConnectionTimeouts(sessionTimeout: configuration.sessionTimeout, requestTimeout: configuration.requestTimeout)
        self.logger = logger
    }

    func log(_ line: String) { logger.info("\(line)") }

    var checkInterval: Duration { configuration.checkInterval }

    // MARK: - Connection

    func channelActive(context: ChannelHandlerContext) {
        startChecks(context: context)
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
                guard let broadcaster = session?.mount.broadcaster else { return }
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

    /// The presentation's URI as the client names it, with a trailing `/` (the Content-Base):
    /// the URI's scheme and authority, and the mount path.
    private static func base(of uri: String, mountPath: String) -> String {
        let path = RTSPURI.path(of: uri)
        let prefix = uri[..<path.startIndex]
        return prefix + mountPath + "/"
    }

    /// The answer to `request`, or nil when it will be sent later (a SETUP binding UDP sockets).
    private func answer(_ request: RTSPRequest, context: ChannelHandlerContext) -> RTSPResponse? {
        let cSeq = request.cSeq
        let found = mounts.find(RTSPURI.path(of: request.uri))
        let sessionHeader = session.map { [("Session", "\($0.id);timeout=\(configuration.sessionTimeout.components.seconds)")] } ?? []
        if let common = commonAnswer(to: request, allowed: Self.publicMethods, isOurs: found != nil, sessionID: session?.id,
                                     sessionHeader: sessionHeader, context: context) {
            return common
        }
        switch request.method {
        case "DESCRIBE":
            guard let found else { return RTSPResponse(status: .notFound, cSeq: cSeq) }
            let base = Self.base(of: request.uri, mountPath: found.path)
            let sdp = SessionDescription(formatDescription: found.mount.format, sessionName: "h264 serve", address: "0.0.0.0", port: 0).text
                + "a=control:track1\r\n"
            return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Content-Base", base), ("Content-Type", "application/sdp")],
                                body: Array(sdp.utf8))
        case "SETUP":
            guard let found else { return RTSPResponse(status: .notFound, cSeq: cSeq) }
            return setup(request, mount: found, cSeq: cSeq, context: context)
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

    private func setup(_ request: RTSPRequest, mount: (path: String, mount: RTSPMounts.Mount), cSeq: String?,
                       context: ChannelHandlerContext) -> RTSPResponse? {
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
            return makeSession(transport: chosen, mount: mount, udp: nil, cSeq: cSeq, context: context)
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
                respond(context: context, makeSession(transport: chosen, mount: mount, udp: UDPTransport(rtp: rtp, rtcp: rtcp, destination: destination,
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
    private func makeSession(transport: RTSPTransport, mount: (path: String, mount: RTSPMounts.Mount), udp: UDPTransport?, cSeq: String?,
                             context: ChannelHandlerContext) -> RTSPResponse {
        var transport = transport
        session?.udp?.close()
        let packetizer = session?.packetizer
            ?? RTPPacketizer(configuration: .init(maximumTransmissionUnit: configuration.maximumTransmissionUnit))
        let id = session?.id ?? makeRTSPSessionID()
        session = Session(id: id, mountPath: mount.path, mount: mount.mount, channels: transport.interleavedChannels ?? 0...1, udp: udp, packetizer: packetizer)
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
            current.clock = RTSPPlayClock(playStart: .now)
            session = current
        }
        let rtpInfo = "url=\(Self.base(of: request.uri, mountPath: current.mountPath))track1;seq=\(current.packetizer.nextSequenceNumber);"
            + "rtptime=\(current.packetizer.timestamp(for: .zero))"
        let response = RTSPResponse(status: .ok, cSeq: cSeq, headers: headers + [("Range", "npt=0.000-"), ("RTP-Info", rtpInfo)])
        // The answer goes out first; the frames (written through the channel, after it) follow.
        joinAfterAnswer = current.broadcasterId == nil
        return response
    }

    private func leaveBroadcast() {
        if let id = session?.broadcasterId { session?.mount.broadcaster.remove(id) }
        session?.broadcasterId = nil
    }

    private func endSession(reason: String) {
        leaveBroadcast()
        session?.udp?.close()
        if let session { log("RTSP session \(session.id) ended (\(reason))") }
        session = nil
    }
}
