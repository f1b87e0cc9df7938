import H264
import Logging
import NIOCore
import NIOPosix
import RTP
import RTSPMessages

/// One connection of an ``RTSPClient`` that plays: the RTSP channel and its handler, the UDP
/// port pair (RTP over UDP), and what the server answered. A client has one at a time; each
/// reconnection makes a new one (``connect(to:credentials:handler:on:configuration:logger:)``).
struct RTSPClientConnection: Sendable {
    /// A `3xx` answer with `Location` to OPTIONS or DESCRIBE: the client follows it.
    struct Redirect: Error {
        var request: String
        var status: RTSPStatus
        var location: String
    }

    let url: String
    let sessionDescription: SessionDescription
    let session: String
    let transport: RTSPTransport
    let aggregateURL: String
    /// What was tolerated in the answers: the SDP's warnings, a repaired `Content-Base`, `RTP-Info`.
    let warnings: [MediaError]
    /// The track's `RTP-Info` entry of the PLAY answer; nil without one.
    let rtpInfo: RTSPRTPInfo.Stream?
    let channel: any Channel
    let udp: (any Channel, any Channel)?
    /// The audio track set up after the video track; nil without one.
    let audio: AudioTrack?
    let handler: NIOLoopBound<RTSPClientHandler>

    /// The statuses of a redirect (RFC 2326 clause 11.3, RFC 7231 clause 6.4).
    static let redirectStatuses: Set<Int> = [301, 302, 303, 305, 307]

    /// Connects to `url` (no user info) and plays it with a new handler made by `handler`:
    /// OPTIONS, DESCRIBE, SETUP of the H.264 track (UDP, then TCP on 461 with the automatic
    /// transport), PLAY; then the keepalive and the receiver reports start. With the automatic
    /// transport over UDP, no packet within the UDP fallback delay tears the session down and
    /// plays the URL again over TCP (``awaitingUDP(delay:credentials:makeHandler:configuration:logger:)``). Throws `Redirect`
    /// for a `3xx` with `Location` to OPTIONS or DESCRIBE (the channel closed).
    static func connect(to url: String, credentials: RTSPCredentials?, handler makeHandler: @escaping @Sendable () -> RTSPClientHandler,
                        on loop: any EventLoop, configuration: RTSPClient.Configuration,
                        logger: Logger) async throws -> RTSPClientConnection {
        let (host, port) = try RTSPURI.hostAndPort(of: url)
        let handler = try await loop.submit { NIOLoopBound(makeHandler(), eventLoop: loop) }.get()
        let channel: any Channel, secure = RTSPURI.isSecure(url), trust = configuration.tlsTrust
        do {
            channel = try await ClientBootstrap(group: loop)
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if secure { try channel.pipeline.syncOperations.addHandler(trust.makeHandler(host: host)) }
                        try channel.pipeline.syncOperations.addHandler(handler.value)
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            throw RTSPClientError(.connectionFailed, "\(url): cannot connect to \(host):\(port) (\(error))")
        }
        var udp: (any Channel, any Channel)?, audioUDP: (any Channel, any Channel)?
        do {
            func request(_ method: String, _ uri: String, _ headers: [(name: String, value: String)] = [],
                         accepting accepted: Set<Int> = [200]) async throws -> RTSPResponse {
                let answer = try await loop.flatSubmit {
                    handler.value.request(method, uri: uri, headers: headers, timeout: configuration.requestTimeout, on: loop)
                }.get()
                if redirectStatuses.contains(answer.status.code), method == "OPTIONS" || method == "DESCRIBE",
                   let location = answer.header("Location") {
                    throw Redirect(request: "\(method) \(uri)", status: answer.status, location: location)
                }
                guard accepted.contains(answer.status.code) else {
                    throw RTSPClientError(.status, "\(method) \(uri): \(answer.status)", status: answer.status)
                }
                return answer
            }
            let options: RTSPResponse
            do {
                options = try await request("OPTIONS", url)
            } catch let error as RTSPClientError where secure && error.code == .connectionClosed {
                // A failed handshake closes the channel before any answer: say why.
                let failure = try? await loop.submit { handler.value.caughtError }.get()
                throw failure.flatMap { $0 }.map { RTSPClientError(.tls, "\(url): \(RTSPTLSTrust.describe(handshakeFailure: $0))") } ?? error
            }
            let described = try await request("DESCRIBE", url, [("Accept", "application/sdp")])
            let description: SessionDescription
            do {
                description = try SessionDescription(parsingVideo: String(decoding: described.body, as: UTF8.self))
            } catch {
                throw RTSPClientError(.badAnswer, "DESCRIBE \(url): the SDP: \(error)")
            }
            let depacketizer = try VideoRTPDepacketizer(description, reorderWindow: configuration.reorderWindow)
            let urls = RTSPControlURLs(requestURL: url, contentBase: described.header("Content-Base"),
                                       contentLocation: described.header("Content-Location"), description: description)
            let track = urls.track
            var setup: RTSPResponse, offer: String
            var overUDP = configuration.transport == .udp || configuration.transport == .automatic && !secure
            while true {
                if overUDP {
                    udp = try await bindUDP(like: channel, on: loop) { handler.value.receive(packet: $0) }
                        rtcp: { handler.value.receive(rtcp: $0) }
                }
                offer = udp.map { "RTP/AVP;unicast;client_port=\($0.0.localAddress?.port ?? 0)-\(($0.0.localAddress?.port ?? 0) + 1)" }
                    ?? "RTP/AVP/TCP;unicast;interleaved=0-1"
                setup = try await request("SETUP", track, [("Transport", offer)], accepting: [200, 461])
                if setup.status.code == 200 { break }
                guard let pair = udp, configuration.transport == .automatic else {
                    throw RTSPClientError(.status, "SETUP \(track): \(setup.status)", status: setup.status)
                }
                logger.info("SETUP \(track): \(setup.status) for RTP over UDP; asking for TCP interleaved")
                try? await pair.0.close()
                try? await pair.1.close()
                udp = nil
                overUDP = false
            }
            guard let session = setup.header("Session").map({ String($0.prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces) }) else {
                throw RTSPClientError(.badAnswer, "SETUP \(track): no Session in the answer")
            }
            let offered = try RTSPTransport.parseList(offer)[0]
            let transport = (try? RTSPTransport.parseList(setup.header("Transport") ?? "").first) ?? offered
            let channels = transport.interleavedChannels
            // RTCP to the server's RTCP port (its server_port's second), from the client's RTCP socket.
            let serverRTCP = transport.serverPorts.flatMap { ports in
                channel.remoteAddress?.ipAddress.flatMap {
                    try? SocketAddress(ipAddress: $0, port: ports.count == 1 ? ports.lowerBound + 1 : ports.upperBound)
                }
            }
            let audio = await setUpAudio(of: description, base: urls.base, session: session, overUDP: overUDP, like: channel, on: loop,
                                         handler: handler, configuration: configuration, logger: logger) {
                try await request($0, $1, $2, accepting: $3)
            }
            audioUDP = audio?.udp
            try await loop.submit { [overUDP, udp] in
                if !overUDP {
                    handler.value.rtpChannel = UInt8(truncatingIfNeeded: channels?.lowerBound ?? 0)
                    handler.value.rtcpChannel = UInt8(truncatingIfNeeded: channels?.upperBound ?? 1)
                }
                handler.value.play(with: depacketizer)
                guard let interval = configuration.receiverReportInterval else { return }
                if let rtcp = udp?.1 {
                    guard let serverRTCP else { return }
                    handler.value.startReceiverReports(every: interval) { report in
                        rtcp.writeAndFlush(AddressedEnvelope(remoteAddress: serverRTCP, data: ByteBuffer(bytes: report)), promise: nil)
                    }
                } else {
                    handler.value.startReceiverReports(every: interval)
                }
            }.get()
            let aggregate = urls.aggregate
            let played = try await request("PLAY", aggregate, [("Session", session), ("Range", "npt=0.000-")])
            var warnings = description.warnings + urls.warnings
            let rtpInfo = played.header("RTP-Info").flatMap { header in
                let info = RTSPRTPInfo(parsing: header)
                warnings += info.warnings
                return info.stream(for: track, warnings: &warnings)
            }
            for warning in warnings { logger.warning("\(url): \(warning)") }
            let keepAliveInterval = configuration.keepAliveInterval ?? RTSPClient.sessionTimeout(in: setup.header("Session")) / 2
            let keepAliveMethod = RTSPClient.publicMethods(in: options).contains("GET_PARAMETER") ? "GET_PARAMETER" : "OPTIONS"
            try await loop.submit {
                handler.value.startKeepAlive(every: keepAliveInterval, method: keepAliveMethod, uri: aggregate, session: session,
                                             timeout: configuration.requestTimeout)
            }.get()
            let connection = RTSPClientConnection(url: url, sessionDescription: description, session: session, transport: transport,
                                                  aggregateURL: aggregate, warnings: warnings, rtpInfo: rtpInfo, channel: channel,
                                                  udp: udp, audio: audio, handler: handler)
            guard overUDP, configuration.transport == .automatic, let delay = configuration.udpFallbackDelay else { return connection }
            return try await connection.awaitingUDP(delay: delay, credentials: credentials, makeHandler: makeHandler, configuration: configuration, logger: logger)
        } catch {
            try? await loop.submit { handler.value.stopKeepAlive() }.get()
            try? await channel.close()
            for pair in [udp, audioUDP].compactMap({ $0 }) {
                try? await pair.0.close()
                try? await pair.1.close()
            }
            throw error
        }
    }

    /// The UDP port RTP arrives on; nil for TCP interleaved.
    var udpPort: Int? { udp?.0.localAddress?.port }

    /// TEARDOWN when the connection is open (its answer awaited for `timeout`; a failure is
    /// logged), then the handler ends with `ending` and the channels close.
    func close(ending: RTSPClient.Ending, teardownTimeout timeout: Duration, logger: Logger) async {
        let handler = self.handler, loop = channel.eventLoop, aggregate = aggregateURL, session = self.session
        try? await loop.submit { handler.value.stopKeepAlive() }.get()
        if channel.isActive {
            do {
                let answer = try await loop.flatSubmit {
                    handler.value.request("TEARDOWN", uri: aggregate, headers: [("Session", session)], timeout: timeout, on: loop)
                }.get()
                if answer.status.code != 200 { logger.info("TEARDOWN: TEARDOWN \(aggregate): \(answer.status)") }
            } catch {
                logger.info("TEARDOWN: \(error)")
            }
        }
        try? await loop.submit { handler.value.end(ending) }.get()
        await closeChannels()
    }

    /// Closes the RTSP channel and the UDP sockets (the handler has ended, or ends now).
    func closeChannels() async {
        try? await channel.close()
        for pair in [udp, audio?.udp].compactMap({ $0 }) {
            try? await pair.0.close()
            try? await pair.1.close()
        }
    }
}
