import H264
public import Logging
public import NIOCore
import NIOPosix

extension RTSPClient {
    /// Connects to `url` (`rtsp://[USER:PASSWORD@]HOST[:PORT]/PATH`, port 554 by default) and
    /// starts playing: OPTIONS, DESCRIBE, SETUP of the H.264 track (its control URL resolved
    /// against `Content-Base`, else `Content-Location`, else `url`), PLAY. A `401 Unauthorized`
    /// is answered with the credentials (``Configuration/credentials``, else the URL's user
    /// info) and the request sent again; the keepalive starts after PLAY.
    ///
    /// - Parameters:
    ///   - url: the stream's URL; its user info, if any, is used for authentication only.
    ///   - group: the event loops of the connection (and of its UDP sockets).
    ///   - configuration: the transport, credentials, timeouts and depacketizer settings.
    ///   - logger: gets a message when the session plays and for what goes wrong on the way.
    /// - Throws: ``RTSPClientError`` for a bad URL, a refused connection, a final 401
    ///   (``RTSPClientError/Code/unauthorized``: `DESCRIBE rtsp://…: 401 Unauthorized: wrong user
    ///   or password`), another answer than 200 (`DESCRIBE URL: 404 Not Found`), a missing answer
    ///   or one without what is needed; `H264Error` for an SDP this client cannot receive
    ///   (packetization-mode 2). Messages name the URL without its user info.
    public static func open(url: String, group: any EventLoopGroup, configuration: Configuration = .init(),
                            logger: Logger = .streamingSilent) async throws -> RTSPClient {
        let credentials = configuration.credentials ?? RTSPCredentials(userInfoOf: url)
        let url = RTSPURI.removingUserInfo(url)
        let (host, port) = try RTSPURI.hostAndPort(of: url)
        let loop = group.next()
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let state = Locked(State())
        let handler = try await loop.submit {
            NIOLoopBound(RTSPClientHandler(continuation: continuation, state: state, idleTimeout: configuration.idleTimeout,
                                           userAgent: configuration.userAgent, credentials: credentials, logger: logger),
                         eventLoop: loop)
        }.get()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler.value) }
                }
                .connect(host: host, port: port).get()
        } catch {
            throw RTSPClientError(.connectionFailed, "\(url): cannot connect to \(host):\(port) (\(error))")
        }
        var udp: (any Channel, any Channel)?
        do {
            func request(_ method: String, _ uri: String, _ headers: [(name: String, value: String)] = [],
                         accepting accepted: Set<Int> = [200]) async throws -> RTSPResponse {
                let answer = try await loop.flatSubmit {
                    handler.value.request(method, uri: uri, headers: headers, timeout: configuration.requestTimeout, on: loop)
                }.get()
                guard accepted.contains(answer.status.code) else {
                    throw RTSPClientError(.status, "\(method) \(uri): \(answer.status)", status: answer.status)
                }
                return answer
            }
            let options = try await request("OPTIONS", url)
            let described = try await request("DESCRIBE", url, [("Accept", "application/sdp")])
            let description: SessionDescription
            do {
                description = try SessionDescription(parsing: String(decoding: described.body, as: UTF8.self))
            } catch {
                throw RTSPClientError(.badAnswer, "DESCRIBE \(url): the SDP: \(error)")
            }
            let depacketizer = try description.depacketizer(reorderWindow: configuration.reorderWindow)
            let base = described.header("Content-Base") ?? described.header("Content-Location") ?? url
            let track = RTSPURI.resolve(description.control, against: base)
            var setup: RTSPResponse, offer: String
            var overUDP = configuration.transport != .tcp
            while true {
                if overUDP { udp = try await bindUDP(like: channel, on: loop, handler: handler) }
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
            let interleaved = UInt8(truncatingIfNeeded: transport.interleavedChannels?.lowerBound ?? 0)
            try await loop.submit { [overUDP] in
                if !overUDP { handler.value.rtpChannel = interleaved }
                handler.value.play(with: depacketizer)
            }.get()
            let aggregate = RTSPURI.resolve("*", against: base)
            _ = try await request("PLAY", aggregate, [("Session", session), ("Range", "npt=0.000-")])
            let keepAliveInterval = configuration.keepAliveInterval ?? sessionTimeout(in: setup.header("Session")) / 2
            let keepAliveMethod = publicMethods(in: options).contains("GET_PARAMETER") ? "GET_PARAMETER" : "OPTIONS"
            try await loop.submit {
                handler.value.startKeepAlive(every: keepAliveInterval, method: keepAliveMethod, uri: aggregate, session: session,
                                             timeout: configuration.requestTimeout)
            }.get()
            let client = RTSPClient(url: url, sessionDescription: description, session: session, transport: transport,
                                    aggregateURL: aggregate, channel: channel, udp: udp, handler: handler, stream: stream,
                                    state: state, configuration: configuration, logger: logger)
            continuation.onTermination = { [weak client] termination in
                if case .cancelled = termination, let client { Task { await client.close() } }
            }
            return client
        } catch {
            try? await channel.close()
            if let udp {
                try? await udp.0.close()
                try? await udp.1.close()
            }
            throw error
        }
    }

    /// A UDP port pair on the address family of `channel`, its RTP socket feeding `handler`.
    private static func bindUDP(like channel: any Channel, on loop: any EventLoop,
                                handler: NIOLoopBound<RTSPClientHandler>) async throws -> (any Channel, any Channel) {
        let local = channel.localAddress?.protocol == .inet6 ? "::" : "0.0.0.0"
        let pair = try await UDPPortPair.bind(host: local, on: loop).get()
        _ = try? await pair.0.setOption(.socketOption(.so_rcvbuf), value: 4 << 20).get()
        try await loop.submit {
            try pair.0.pipeline.syncOperations.addHandler(RTPDatagramHandler(from: nil) { handler.value.receive(packet: $0) })
        }.get()
        return pair
    }

    /// The methods an OPTIONS answer lists in `Public` (RFC 2326 clause 12.28), uppercased.
    static func publicMethods(in answer: RTSPResponse) -> Set<String> {
        Set((answer.header("Public") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() })
    }

    /// The `timeout` of a `Session` header (`ID;timeout=N`, RFC 2326 clause 12.37): 60 s when
    /// absent or not a positive number.
    static func sessionTimeout(in header: String?) -> Duration {
        let parameters = (header ?? "").split(separator: ";").dropFirst()
        for parameter in parameters {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { String($0.filter { $0 != " " && $0 != "\t" }) }
            if pair.count == 2, pair[0].lowercased() == "timeout", let seconds = Int(pair[1]), seconds > 0 {
                return .seconds(seconds)
            }
        }
        return .seconds(60)
    }

    /// Ends the session: TEARDOWN (its answer awaited for the teardown timeout; a failure is
    /// logged), then the connection and the UDP sockets close and the events end
    /// (``Ending/closed`` unless they had ended already). Safe to call more than once and from
    /// several tasks: every call returns once the one closing is done.
    public func close() async {
        let closing = state.withLock { state in
            if let closing = state.closing { return closing }
            let closing = Task { await self.teardownAndClose() }
            state.closing = closing
            return closing
        }
        await closing.value
    }

    /// TEARDOWN, then everything closes.
    private func teardownAndClose() async {
        let handler = self.handler, loop = channel.eventLoop, configuration = self.configuration
        let aggregate = aggregateURL, session = self.session
        try? await loop.submit { handler.value.stopKeepAlive() }.get()
        if channel.isActive {
            do {
                let answer = try await loop.flatSubmit {
                    handler.value.request("TEARDOWN", uri: aggregate, headers: [("Session", session)],
                                       timeout: configuration.teardownTimeout, on: loop)
                }.get()
                if answer.status.code != 200 { logger.info("TEARDOWN: TEARDOWN \(aggregate): \(answer.status)") }
            } catch {
                logger.info("TEARDOWN: \(error)")
            }
        }
        try? await loop.submit { handler.value.end(.closed) }.get()
        try? await channel.close()
        if let udp {
            try? await udp.0.close()
            try? await udp.1.close()
        }
    }
}
