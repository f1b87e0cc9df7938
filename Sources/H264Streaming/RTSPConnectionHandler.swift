import Foundation
import H264
import HEVC
import Logging
import NIOCore
import NIOPosix
import RTP
import RTSPMessages

/// One RTSP connection of an ``RTSPServer``: reads requests with `RTSPMessageReader` and
/// answers them; its one session plays or records, by the mount path it is set up for. The
/// request preamble (`RTSPServerConnection`), session ids, timeouts, UDP port pairs and
/// interleaved framing are the same for both.
///
/// **Play** (`+Frames`, `+Play`): while the session plays, the RTP packets its mount's
/// ``Broadcaster`` made of each access unit once for the whole stream (RFC 6184 or RFC 7798, by
/// the frame's format; one SSRC and sequence; timestamps from the frames' presentation times on
/// the stream's clock, `RTSPPlayClock`) are written to it: interleaved in the connection
/// (`$`, channel, length, packet) or as datagrams from its UDP port pair. RTP over TCP
/// (`RTP/AVP/TCP`) or UDP unicast (`RTP/AVP;unicast;client_port=A-B`: sent from a port pair of
/// the server's, `server_port`, to the client's address of the RTSP connection), whichever the
/// client lists first.
///
/// **Record** (`+Record`), as FFmpeg's `-f rtsp` and GStreamer's `rtspclientsink` speak it:
/// ANNOUNCE (an SDP of an H.264 stream), SETUP of its track with `mode=record` over TCP
/// interleaved (RTP on the first channel) or UDP (`server_port`: datagrams from another host
/// than the publisher's are ignored), RECORD, TEARDOWN; the RTP packets go to the path's
/// `RTSPRecording`; RTCP is accepted and ignored.
///
/// Answers (RFC 2326 clause 7.1.1): 401 (with `WWW-Authenticate`) for a request without valid
/// credentials where an ``RTSPServer/Authentication`` applies (`+Authentication`, before
/// anything else is looked at), 400 for a malformed request or one without CSeq (or an
/// ANNOUNCE whose body is not an SDP of an H.264 stream we can receive), 404 for a path nothing
/// is mounted at (or a SETUP of another track than the announced one), 405 (with `Allow`) for
/// the methods of RFC 2326 the path's mode does not allow, 501 for other methods, 453 for an
/// ANNOUNCE while another connection holds the record path, 454 for an unknown session, 455
/// for PLAY or PAUSE before SETUP, SETUP before ANNOUNCE, RECORD before SETUP, or ANNOUNCE or
/// SETUP while recording, 461 for a transport other than unicast RTP/AVP over TCP or over UDP
/// (over TLS, other than over TCP),
/// 500 when no UDP port pair is free, 505 for another version, 414/413 for a request line or
/// body over the limit (then the connection closes: its framing is lost), 408 for a request
/// that does not finish within `requestTimeout` (then it closes). A connection that hears
/// nothing (no request, no RTCP) for `sessionTimeout` closes, unless it is recording (a quiet
/// UDP publisher: the recording's idle timeout ends it instead).
final class RTSPConnectionHandler: ChannelDuplexHandler, RTSPServerConnection {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = BroadcastWrite
    typealias OutboundOut = ByteBuffer

    /// The methods of a play path.
    static let playMethods = ["OPTIONS", "DESCRIBE", "SETUP", "PLAY", "PAUSE", "TEARDOWN", "GET_PARAMETER"]
    /// The methods of a record path (a publisher's).
    static let recordMethods = ["OPTIONS", "ANNOUNCE", "SETUP", "RECORD", "TEARDOWN", "GET_PARAMETER"]

    /// RTP over UDP: the server's RTP and RTCP sockets and, when playing, where the packets go.
    struct UDPTransport {
        let rtp: any Channel
        let rtcp: any Channel
        var destination: SocketAddress?
        var rtcpDestination: SocketAddress?
        func close() {
            rtp.close(promise: nil)
            rtcp.close(promise: nil)
        }
    }

    /// What a session does: play a mount's stream, or record to a record path.
    enum Mode {
        case play(RTSPMounts.Mount)
        case record(NIOLoopBoundBox<RTSPRecording>)
    }

    struct Session {
        let id: String
        /// The path set up, and what the session does there.
        let mountPath: String
        let mode: Mode
        var transport: RTSPTransport
        var channels: ClosedRange<Int>
        var udp: UDPTransport?
        // Play (the packets are the stream's, made once by the broadcaster):
        var broadcasterId: Int?
        /// The packets and payload octets written to this viewer, for its sender reports.
        var packetsSent: UInt32 = 0
        var octetsSent: UInt32 = 0
        var lastReport: ContinuousClock.Instant?
        /// Whether the video track is set up (the fields above are its); false for a viewer of
        /// the audio track only.
        var takesVideo = true
        /// The audio track, once set up.
        var audio: AudioTrackSession?

        /// The stream played; nil when recording.
        var mount: RTSPMounts.Mount? { if case .play(let mount) = mode { mount } else { nil } }
        /// The recording fed; nil when playing.
        var recording: RTSPRecording? { if case .record(let box) = mode { box.value } else { nil } }
    }

    let mounts: RTSPMounts
    let configuration: RTSPServer.Configuration
    let logger: Logger
    /// The server's Digest nonces (shared by its connections).
    let nonces: RTSPDigestNonces
    /// The server's ``ServerEvent``s: sessions set up, playing, recording and ended.
    let events: AsyncStream<ServerEvent>.Continuation
    var reader = RTSPMessageReader()
    var session: Session?
    var timeouts: RTSPConnectionTimeouts
    var checkTimer: Scheduled<Void>?
    var closing = false
    /// Set by a PLAY that starts the stream: join the broadcaster once the answer is written.
    var joinAfterAnswer = false
    /// This handler's context while it plays (the broadcaster writes frames from it down);
    /// nil otherwise, which also breaks the handler–context cycle.
    var viewerContext: ChannelHandlerContext?
    /// Record: the ANNOUNCE's Request-URI, SDP and recording (the path's publishing slot).
    var announced: (uri: String, description: SessionDescription, recording: NIOLoopBoundBox<RTSPRecording>)?
    /// This connection, as its recording knows it.
    var identity: ObjectIdentifier { ObjectIdentifier(self) }

    init(mounts: RTSPMounts, configuration: RTSPServer.Configuration, logger: Logger,
         events: AsyncStream<ServerEvent>.Continuation = ServerEvent.makeStream().1, nonces: RTSPDigestNonces = .init()) {
        self.mounts = mounts
        self.nonces = nonces
        self.events = events
        self.configuration = configuration
        self.timeouts = RTSPConnectionTimeouts(sessionTimeout: configuration.sessionTimeout, requestTimeout: configuration.requestTimeout)
        self.logger = logger
    }

    func log(_ line: String) { logger.info("\(line)") }

    var checkInterval: Duration { configuration.checkInterval }

    /// The `Session` header of this connection's session.
    var sessionHeader: [(name: String, value: String)] {
        session.map { [("Session", "\($0.id);timeout=\(configuration.sessionTimeout.components.seconds)")] } ?? []
    }

    /// True once this connection has announced a stream to a record path.
    var isPublisher: Bool { session?.recording != nil || announced != nil }

    /// True while this connection records (its recording has begun and it holds the slot).
    var isRecording: Bool {
        guard let recording = session?.recording ?? announced?.recording.value else { return false }
        return recording.isRecording && recording.publisher == identity
    }

    // MARK: - Connection

    func channelActive(context: ChannelHandlerContext) {
        startChecks(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopChecks()
        endSession(reason: isPublisher ? "the publisher closed the connection" : "connection closed", event: "connection closed", ending: .connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or broken connection: the peer is gone.
        context.close(promise: nil)
    }

    /// Once a second (after the request timeout, `RTSPServerConnection`): the session timeout
    /// (not while recording: a quiet UDP publisher ends by the recording's idle timeout), then
    /// the sender report if one is due.
    func check(sessionExpired: Bool, context: ChannelHandlerContext) -> Bool {
        guard sessionExpired, !isRecording else {
            sendSenderReportIfDue(context: context)
            return true
        }
        log("RTSP \(address(context)): nothing heard for \(configuration.sessionTimeout): "
            + (session == nil ? "closed" : "session \(session!.id) timed out"))
        closing = true
        endSession(reason: "timed out", event: "timed out", ending: .connectionClosed)
        context.close(promise: nil)
        return false
    }

    /// The session ends before the last answer goes.
    func endBeforeClosing() {
        endSession(reason: "closed", event: "closed", ending: .connectionClosed)
    }

    // MARK: - Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        read(unwrapInboundIn(data), context: context)
    }

    func handle(_ message: RTSPMessageReader.Message, context: ChannelHandlerContext) {
        switch message {
        case .request(let request):
            if let response = answer(request, context: context) { respond(context: context, response) }
            if joinAfterAnswer { join(context: context) }
        case .interleavedFrame(let channel, let payload):
            // Record: RTP on the session's first channel. RTCP (receiver reports while playing)
            // only keeps the session alive.
            guard let session, let recording = session.recording else { break }
            if session.udp == nil, session.takesVideo, Int(channel) == session.channels.lowerBound {
                payload.withUnsafeBytes { recording.receive(packet: $0, from: identity) }
            } else if let audio = session.audio, audio.udp == nil, Int(channel) == audio.channels.lowerBound {
                payload.withUnsafeBytes { recording.receive(audioPacket: $0, from: identity) }
            } else if let track: RTSPSessionTimeline.Track = Int(channel) == session.channels.lowerBound + 1 ? .video
                        : Int(channel) == (session.audio?.channels.lowerBound ?? -2) + 1 ? .audio : nil {
                payload.withUnsafeBytes { recording.receive(rtcp: $0, track: track, from: identity) }
            }
        case .response, .malformedRequest:
            break // A client's answer to nothing this server asks; malformed requests are answered by `read`.
        }
    }

    /// The answer to `request`, or nil when it will be sent later (a SETUP binding UDP sockets,
    /// a TEARDOWN of a recording answered before it ends).
    private func answer(_ request: RTSPRequest, context: ChannelHandlerContext) -> RTSPResponse? {
        let cSeq = request.cSeq
        let found = mounts.find(RTSPURI.path(of: request.uri))
        if let refusal = refusal(of: request, path: found?.path, context: context) { return refusal }
        if let common = commonAnswer(to: request, allowed: found?.entry.methods ?? mounts.methods, isOurs: found != nil,
                                     sessionID: session?.id, sessionHeader: sessionHeader, context: context) {
            return common
        }
        guard let found else { return RTSPResponse(status: .notFound, cSeq: cSeq) }
        switch (request.method, found.entry) {
        case ("DESCRIBE", .play(let mount)):
            return describe(request, path: found.path, mount: mount, cSeq: cSeq)
        case ("SETUP", .play(let mount)):
            guard session?.broadcasterId == nil else {
                // Changing the transport of a playing stream is not supported (clause 10.4 allows refusing it).
                return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq)
            }
            let audio = mount.audio != nil && RTSPURI.path(of: request.uri).hasSuffix("/track2")
            return setup(request, path: found.path, mode: .play(mount), audio: audio, cSeq: cSeq, context: context)
        case ("SETUP", .record):
            return setupRecord(request, cSeq: cSeq, context: context)
        case ("PLAY", _):
            return play(request, cSeq: cSeq, context: context)
        case ("PAUSE", _):
            guard session != nil else { return RTSPResponse(status: .methodNotValidInThisState, cSeq: cSeq) }
            leaveBroadcast()
            return RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader)
        case ("ANNOUNCE", .record(let recording)):
            return announce(request, path: found.path, recording: recording, cSeq: cSeq, context: context)
        case ("RECORD", _):
            return record(cSeq: cSeq, context: context)
        case ("TEARDOWN", _):
            guard session != nil || announced != nil else { return RTSPResponse(status: .ok, cSeq: cSeq) }
            // The answer first: the end of a recording may end the program.
            respond(context: context, RTSPResponse(status: .ok, cSeq: cSeq, headers: sessionHeader))
            endSession(reason: isPublisher ? "TEARDOWN from \(address(context))" : "teardown", event: "teardown", ending: .teardown)
            return nil
        default:
            return RTSPResponse(status: .notImplemented, cSeq: cSeq)
        }
    }

    /// SETUP of `path` for `mode` (the caller has checked the mode's state): the first unicast
    /// RTP transport offered, over TCP interleaved or over a UDP port pair bound on the
    /// connection's local address (then answered once it is bound).
    func setup(_ request: RTSPRequest, path: String, mode: Mode, audio: Bool = false, cSeq: String?,
               context: ChannelHandlerContext) -> RTSPResponse? {
        let offered: [RTSPTransport]
        do {
            offered = try RTSPTransport.parseList(request.header("Transport") ?? "")
        } catch {
            log("RTSP \(address(context)): \(error)")
            return RTSPResponse(status: RTSPStatus(for: error), cSeq: cSeq)
        }
        let recording: RTSPRecording? = if case .record(let box) = mode { box.value } else { nil }
        // Over TLS, RTP goes interleaved only: plain UDP would give the media away.
        let allowed = configuration.tls == nil ? offered : offered.filter { $0.lowerTransport != .udp }
        guard var chosen = RTSPTransport.firstUnicastRTP(in: allowed, mode: recording == nil ? "PLAY" : "RECORD") else {
            return RTSPResponse(status: .unsupportedTransport, cSeq: cSeq)
        }
        guard chosen.lowerTransport == .udp else {
            if audio && chosen.interleavedChannels == nil { chosen.interleavedChannels = 2...3 }
            return makeSession(transport: chosen, path: path, mode: mode, udp: nil, audio: audio, cSeq: cSeq, context: context)
        }
        guard let remote = context.channel.remoteAddress?.ipAddress, let local = context.channel.localAddress?.ipAddress else {
            return RTSPResponse(status: .unsupportedTransport, cSeq: cSeq)
        }
        // Play: the packets go to the client's ports.
        var destinations: (rtp: SocketAddress, rtcp: SocketAddress)?
        if recording == nil {
            guard let clientPorts = chosen.clientPorts,
                  let rtp = try? SocketAddress(ipAddress: remote, port: clientPorts.lowerBound),
                  let rtcp = try? SocketAddress(ipAddress: remote, port: clientPorts.upperBound) else {
                return RTSPResponse(status: .unsupportedTransport, cSeq: cSeq)
            }
            destinations = (rtp, rtcp)
        }
        UDPPortPair.bind(host: local, on: context.eventLoop).assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let (rtp, rtcp)):
                guard !closing, context.channel.isActive else {
                    rtp.close(promise: nil)
                    rtcp.close(promise: nil)
                    return
                }
                if let recording {
                    // Room for a burst (FFmpeg without -re sends a whole file at once).
                    rtp.setOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(configuration.receiveBufferSize)).whenFailure { _ in }
                    let identity = identity
                    let box = NIOLoopBound(recording, eventLoop: context.eventLoop)
                    do {
                        try rtp.pipeline.syncOperations.addHandler(RTPDatagramHandler(from: remote) { packet in
                            if audio { box.value.receive(audioPacket: packet, from: identity) } else { box.value.receive(packet: packet, from: identity) }
                        })
                        try recordRTCP(rtcp, box: box, identity: identity, remote: remote, track: audio ? .audio : .video)
                    } catch {
                        rtp.close(promise: nil)
                        rtcp.close(promise: nil)
                        return respond(context: context, RTSPResponse(status: .internalServerError, cSeq: cSeq))
                    }
                } else {
                    // Play: the viewer's RTCP receiver reports keep its session alive (players
                    // such as VLC send no other keepalive over UDP).
                    let box = NIOLoopBound(self, eventLoop: context.eventLoop), loop = context.eventLoop
                    try? rtcp.pipeline.syncOperations.addHandler(RTPDatagramHandler(from: remote) { _ in
                        box.value.timeouts.heard(hasPartialMessage: box.value.reader.hasPartialMessage, at: loop.now)
                    })
                }
                let port = rtp.localAddress?.port ?? 0
                chosen.serverPorts = port...(port + 1)
                let udp = UDPTransport(rtp: rtp, rtcp: rtcp, destination: destinations?.rtp, rtcpDestination: destinations?.rtcp)
                respond(context: context, makeSession(transport: chosen, path: path, mode: mode, udp: udp, audio: audio, cSeq: cSeq,
                                                      context: context))
            case .failure(let error):
                log("RTSP \(address(context)): no UDP port pair: \(error)")
                respond(context: context, RTSPResponse(status: .internalServerError, cSeq: cSeq))
            }
        }
        return nil
    }

    /// Sets up (or sets up again) the connection's session with `transport`: a new session id
    /// the first time, the old one after.
    private func makeSession(transport: RTSPTransport, path: String, mode: Mode, udp: UDPTransport?, audio: Bool = false, cSeq: String?,
                             context: ChannelHandlerContext) -> RTSPResponse {
        var transport = transport
        if audio {
            return makeAudioSession(transport: transport, path: path, mode: mode, udp: udp, cSeq: cSeq, context: context)
        }
        session?.udp?.close()
        let id = session?.id ?? makeRTSPSessionID()
        // A viewer's packets are the stream's: its SSRC is the broadcaster's.
        if case .play(let mount) = mode { transport.ssrc = mount.broadcaster.enableRTP(maximumTransmissionUnit: configuration.maximumTransmissionUnit) }
        let keptAudio = session?.mountPath == path ? session?.audio : nil
        if keptAudio == nil { session?.audio?.udp?.close() }
        session = Session(id: id, mountPath: path, mode: mode, transport: transport, channels: transport.interleavedChannels ?? 0...1,
                          udp: udp, audio: keptAudio)
        log("RTSP \(address(context)): session \(id) set up (\(transport.text))")
        events.yield(.sessionSetUp(session: id, path: path, address: address(context), transport: transport.text))
        return RTSPResponse(status: .ok, cSeq: cSeq, headers: [
            ("Transport", transport.text),
            ("Session", "\(id);timeout=\(configuration.sessionTimeout.components.seconds)"),
        ])
    }

    /// Ends the connection's session: a viewer leaves its broadcaster; a publisher's recording
    /// hears that it left (which ends it once it has recorded). The UDP sockets close, except a
    /// recording's: packets may still arrive there, and the recording closes them when it ends.
    /// `reason` is logged; `event` is the reason of the ``ServerEvent/sessionEnded(session:reason:)`` event.
    func endSession(reason: String, event: String, ending: RTSPPublisher.Ending) {
        leaveBroadcast()
        if let recording = session?.recording ?? announced?.recording.value {
            for udp in [session?.udp, session?.audio?.udp].compactMap({ $0 }) {
                if recording.isRecording && recording.publisher == identity { recording.closeWhenFinished(udp.rtp, udp.rtcp) } else { udp.close() }
            }
            recording.leave(identity, ending: ending, reason: reason)
        } else {
            session?.udp?.close()
            session?.audio?.udp?.close()
            if let session { log("RTSP session \(session.id) ended (\(reason))") }
        }
        if let session { events.yield(.sessionEnded(session: session.id, reason: event)) }
        session = nil
        announced = nil
    }
}
