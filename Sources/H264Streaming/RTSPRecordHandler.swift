import Foundation
import H264
import NIOCore
import NIOPosix

/// One RTSP connection of an ``RTSPRecordServer``: the server side of RFC 2326's record mode,
/// as FFmpeg's RTSP muxer (`-f rtsp`) and GStreamer's `rtspclientsink` speak it. Requests are
/// read with `RTSPMessageReader`; the RTP packets go to the `RTSPRecording`.
///
/// A publisher sends OPTIONS, ANNOUNCE (an `application/sdp` body: the H.264 stream, its
/// `sprop-parameter-sets` and packetization-mode), SETUP of the H.264 track with `mode=record`
/// over TCP interleaved (`RTP/AVP/TCP;unicast;interleaved=0-1`, RTP on the first channel) or
/// over UDP (`client_port=A-B`: answered with the `server_port` pair this handler binds on the
/// connection's local address; datagrams from another host than the publisher's are ignored),
/// RECORD, and at the end TEARDOWN (or it closes the connection). RTCP (the second channel, or
/// the second port) is accepted and ignored.
///
/// Answers (RFC 2326 clause 7.1.1): 400 for a malformed request, one without CSeq, or an
/// ANNOUNCE whose body is not an SDP of an H.264 stream we can receive; 404 for another path
/// than the listening URL's (or a SETUP of another track than the announced H.264 one); 405
/// (with `Allow`) for DESCRIBE, PLAY, PAUSE and the other methods of RFC 2326 record mode does
/// not use here; 501 for unknown methods; 453 Not Enough Bandwidth for an ANNOUNCE while another
/// connection holds the publishing slot (one publisher at a time); 454 for an unknown session;
/// 455 for SETUP before ANNOUNCE, RECORD before SETUP, or ANNOUNCE or SETUP while recording;
/// 461 for a transport other than unicast RTP/AVP over TCP or UDP in record mode; 500 when no
/// UDP port pair is free; 408 for a request not complete within the request timeout (then the
/// connection closes). A connection that is not recording and sends nothing for the session
/// timeout closes; either way a publishing slot it held is free.
final class RTSPRecordHandler: ChannelInboundHandler, RTSPServerConnection {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The methods of a publisher, answered in listen mode.
    static let allowedMethods = ["OPTIONS", "ANNOUNCE", "SETUP", "RECORD", "TEARDOWN", "GET_PARAMETER"]
    /// The session timeout advertised in `Session` (RFC 2326 clause 12.37), in seconds. The
    /// recording's own end is the idle timeout without a packet.
    private var sessionTimeout: Int64 { configuration.sessionTimeout.components.seconds }

    /// The connection's session: set up by SETUP.
    private struct Session {
        let id: String
        var transport: RTSPTransport
        var udp: (rtp: any Channel, rtcp: any Channel)?

        func close() {
            udp?.rtp.close(promise: nil)
            udp?.rtcp.close(promise: nil)
        }
    }

    private let recording: RTSPRecording
    /// The listening URL's path, without a trailing `/` (empty for the root).
    private let path: String
    var reader = RTSPMessageReader()
    /// The ANNOUNCE's Request-URI and SDP.
    private var announced: (uri: String, description: SessionDescription)?
    private var session: Session?
    var closing = false
    var timeouts: RTSPConnectionTimeouts
    var checkTimer: Scheduled<Void>?
    private let configuration: RTSPRecordServer.Configuration
    private var identity: ObjectIdentifier { ObjectIdentifier(self) }

    /// A handler for one connection to the listener of `path` (e.g. `/live`), feeding `recording`.
    init(recording: RTSPRecording, path: String, configuration: RTSPRecordServer.Configuration) {
        self.recording = recording
        self.path = path.hasSuffix("/") ? String(path.dropLast()) : path
        self.configuration = configuration
        timeouts = RTSPConnectionTimeouts(sessionTimeout: configuration.sessionTimeout, requestTimeout: configuration.requestTimeout)
    }

    var checkInterval: Duration { configuration.checkInterval }

    func log(_ line: String) { recording.log(line) }

    // MARK: - Connection

    func channelActive(context: ChannelHandlerContext) {
        startChecks(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopChecks()
        endSession(ending: .connectionClosed, reason: "the publisher closed the connection")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or broken connection: the publisher is gone (channelInactive follows).
        context.close(promise: nil)
    }

    /// Every check interval (after the request timeout, `RTSPServerConnection`): a connection that
    /// is not recording and sends nothing for the session timeout closes (and so
    /// frees the publishing slot it may hold). The recording publisher's connection may stay
    /// quiet (RTP over UDP): the idle timeout without a packet ends the recording instead.
    func check(sessionExpired: Bool, context: ChannelHandlerContext) -> Bool {
        guard sessionExpired, !(recording.isRecording && recording.publisher == identity) else { return true }
        log("RTSP \(address(context)): nothing heard for \(timeouts.sessionTimeout): closed")
        closing = true
        context.close(promise: nil)
        return false
    }

    /// Nothing: the session ends when the connection has closed (`channelInactive`).
    func endBeforeClosing() {}

    /// Ends this connection's session, and the recording hears that its publisher left (which
    /// ends it once it has recorded). The UDP sockets close, except the recording's: packets
    /// may still arrive there, and they close with everything when the recording has ended.
    private func endSession(ending: RTSPPublisher.Ending, reason: String) {
        if !(recording.isRecording && recording.publisher == identity) { session?.close() }
        session = nil
        announced = nil
        recording.leave(identity, ending: ending, reason: reason)
    }

    // MARK: - Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        read(unwrapInboundIn(data), context: context)
    }

    func handle(_ message: RTSPMessageReader.Message, context: ChannelHandlerContext) {
        switch message {
        case .request(let request):
            if let response = answer(request, context: context) { respond(context: context, response) }
        case .interleavedFrame(let channel, let payload):
            // RTP on the first channel of the session; RTCP (the second) is ignored.
            if let session, session.udp == nil, Int(channel) == session.transport.interleavedChannels?.lowerBound {
                payload.withUnsafeBytes { recording.receive(packet: $0, from: identity) }
            }
        case .response, .malformedRequest:
            break // An answer to nothing this server asks; malformed requests are answered by `read`.
        }
    }

    /// True when `uri` names the listening path or something below it (a track).
    private func isOurs(_ uri: String) -> Bool {
        let requested = RTSPURI.path(of: uri)
        return requested == path || requested == path + "/" || requested.hasPrefix(path + "/")
    }

    /// The answer to `request`, or nil when it is sent later (a SETUP binding UDP sockets).
    private func answer(_ request: RTSPRequest, context: ChannelHandlerContext) -> RTSPResponse? {
        let sessionHeader = session.map { [("Session", "\($0.id);timeout=\(sessionTimeout)")] } ?? []
        if let common = commonAnswer(to: request, allowed: Self.allowedMethods, isOurs: isOurs(request.uri), sessionID: session?.id,
                                     sessionHeader: sessionHeader, context: context) {
            return common
        }
        guard let cSeq = request.cSeq else { return RTSPResponse(status: .badRequest, cSeq: nil) }
        switch request.method {
        case "ANNOUNCE":
            return announce(request, cSeq: cSeq, context: context)
        case "SETUP":
            return setup(request, cSeq: cSeq, context: context)
        case "RECORD":
            guard let session else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
            if !recording.isRecording {
                // UDP packets sent before a TEARDOWN may arrive after it: wait for 100 ms without one.
                recording.record(by: identity, lingering: session.udp == nil ? .zero : configuration.lingering,
                                 remoteAddress: context.channel.remoteAddress)
                log("recording from \(address(context)) (session \(session.id), " + (session.udp.map {
                    "RTP on udp port \($0.rtp.localAddress?.port ?? 0)"
                } ?? "RTP on interleaved channel \(session.transport.interleavedChannels?.lowerBound ?? 0)") + ")")
            }
            return RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader)
        case "TEARDOWN":
            let response = RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader)
            // The answer first: the recording may end the command.
            respond(context: context, response)
            endSession(ending: .teardown, reason: "TEARDOWN from \(address(context))")
            return nil
        default:
            return RTSPResponse(status: .notImplemented, cSeq: cSeq)
        }
    }

    private func announce(_ request: RTSPRequest, cSeq: String, context: ChannelHandlerContext) -> RTSPResponse {
        guard session == nil else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
        let description: SessionDescription
        do {
            description = try SessionDescription(parsing: String(decoding: request.body, as: UTF8.self))
        } catch {
            log("RTSP \(address(context)): ANNOUNCE: the SDP: \(error)")
            return RTSPResponse(status: .badRequest, cSeq: cSeq)
        }
        do {
            guard try recording.announce(description, by: identity) else {
                log("RTSP \(address(context)): ANNOUNCE refused: another publisher holds \(path.isEmpty ? "/" : path)")
                return RTSPResponse(status: .notEnoughBandwidth, cSeq: cSeq)
            }
        } catch {
            log("RTSP \(address(context)): ANNOUNCE: \(error)")
            return RTSPResponse(status: .badRequest, cSeq: cSeq)
        }
        announced = (request.uri, description)
        log("RTSP \(address(context)): announced H.264 (packetization-mode \(description.packetizationMode), "
            + "\(description.parameterSets.count) parameter sets in the SDP)")
        return RTSPResponse(status: .ok, cSeq: cSeq)
    }

    private func setup(_ request: RTSPRequest, cSeq: String, context: ChannelHandlerContext) -> RTSPResponse? {
        guard let announced, !recording.isRecording else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
        // The H.264 track's control URL, resolved against the ANNOUNCE's URI (RFC 2326 appendix C.1.1).
        let track = RTSPURI.resolve(announced.description.control, against: announced.uri)
        guard RTSPURI.path(of: request.uri) == RTSPURI.path(of: track) else {
            return RTSPResponse(status: .notFound, cSeq: cSeq)
        }
        let offered: [RTSPTransport]
        do {
            offered = try RTSPTransport.parseList(request.header("Transport") ?? "")
        } catch {
            log("RTSP \(address(context)): \(error)")
            return RTSPResponse(status: RTSPStatus(for: error), cSeq: cSeq)
        }
        guard var chosen = RTSPTransport.firstUnicastRTP(in: offered, mode: "RECORD") else {
            return RTSPResponse(status: .unsupportedTransport, cSeq: cSeq)
        }
        guard chosen.lowerTransport == .udp else {
            return makeSession(transport: chosen, udp: nil, cSeq: cSeq, context: context)
        }
        guard let local = context.channel.localAddress?.ipAddress, let publisher = context.channel.remoteAddress?.ipAddress else {
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
                // Room for a burst (FFmpeg without -re sends a whole file at once).
                rtp.setOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(configuration.receiveBufferSize)).whenFailure { _ in }
                let identity = identity
                let recording = recording
                do {
                    try rtp.pipeline.syncOperations.addHandler(RTPDatagramHandler(from: publisher) { packet in
                        recording.receive(packet: packet, from: identity)
                    })
                } catch {
                    rtp.close(promise: nil)
                    rtcp.close(promise: nil)
                    return respond(context: context, RTSPResponse(status: .internalServerError, cSeq: cSeq))
                }
                let port = rtp.localAddress?.port ?? 0
                chosen.serverPorts = port...(port + 1)
                respond(context: context, makeSession(transport: chosen, udp: (rtp, rtcp), cSeq: cSeq, context: context))
            case .failure(let error):
                log("RTSP \(address(context)): no UDP port pair: \(error)")
                respond(context: context, RTSPResponse(status: .internalServerError, cSeq: cSeq))
            }
        }
        return nil
    }

    /// Sets up (or sets up again) the connection's session with `transport`.
    private func makeSession(transport: RTSPTransport, udp: (rtp: any Channel, rtcp: any Channel)?, cSeq: String,
                             context: ChannelHandlerContext) -> RTSPResponse {
        session?.close()
        let id = session?.id ?? makeRTSPSessionID()
        session = Session(id: id, transport: transport, udp: udp)
        log("RTSP \(address(context)): session \(id) set up (\(transport.text))")
        return RTSPResponse(status: .ok, cSeq: cSeq, headers: [
            ("Transport", transport.text),
            ("Session", "\(id);timeout=\(sessionTimeout)"),
        ])
    }
}
