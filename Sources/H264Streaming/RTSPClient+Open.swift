import H264
public import Logging
public import NIOCore
import NIOPosix
public import RTSPMessages

extension RTSPClient {
    /// Connects to `url` (`rtsp://[USER:PASSWORD@]HOST[:PORT]/PATH`, port 554 by default) and
    /// starts playing: OPTIONS, DESCRIBE, SETUP of the H.264 track (its control URL resolved
    /// against `Content-Base`, else `Content-Location`, else `url`), PLAY. A `401 Unauthorized`
    /// is answered with the credentials (``Configuration/credentials``, else the URL's user
    /// info) and the request sent again; a redirect (`3xx` with `Location`) to OPTIONS or
    /// DESCRIBE is followed on a new connection, at most 3 times. The keepalive and the RTCP
    /// receiver reports start after PLAY.
    ///
    /// - Parameters:
    ///   - url: the stream's URL; its user info, if any, is used for authentication only.
    ///   - group: the event loops of the connection (and of its UDP sockets).
    ///   - configuration: the transport, credentials, timeouts, reconnection and depacketizer settings.
    ///   - logger: gets a message when the session plays and for what goes wrong on the way.
    /// - Throws: ``RTSPClientError`` for a bad URL, a refused connection, a final 401
    ///   (``RTSPClientError/Code/unauthorized``: `DESCRIBE rtsp://…: 401 Unauthorized: wrong user
    ///   or password`), another answer than 200 (`DESCRIBE URL: 404 Not Found`), a missing answer
    ///   or one without what is needed, a redirect loop or a fourth redirect
    ///   (``RTSPClientError/Code/redirect``); `MediaError` for an SDP this client cannot receive
    ///   (packetization-mode 2). Messages name the URL without its user info. Reconnection
    ///   (``Configuration/reconnect``) applies once this has succeeded.
    public static func open(url: String, group: any EventLoopGroup, configuration: Configuration = .init(),
                            logger: Logger = .streamingSilent) async throws -> RTSPClient {
        let client = RTSPClient(url: RTSPURI.removingUserInfo(url), credentials: configuration.credentials ?? RTSPCredentials(userInfoOf: url),
                                loop: group.next(), configuration: configuration, logger: logger)
        try await client.install(client.connect(resuming: false))
        client.continuation.onTermination = { [weak client] termination in
            if case .cancelled = termination, let client { Task { await client.close() } }
        }
        return client
    }

    /// A new connection to the requested URL, redirects followed; its handler is the next
    /// generation's.
    func connect(resuming: Bool) async throws -> RTSPClientConnection {
        var url = requestedURL, credentials = self.credentials, visited = [requestedURL]
        while true {
            let (generation, start) = state.withLock { state in
                state.generation += 1
                return (state.generation, state.lastPresentationTime)
            }
            let configuration = self.configuration, logger = self.logger, continuation = self.continuation, state = self.state
            do {
                return try await RTSPClientConnection.connect(to: url, credentials: credentials, handler: { [weak self, credentials] in
                    RTSPClientHandler(continuation: continuation, state: state, idleTimeout: configuration.idleTimeout,
                                      userAgent: configuration.userAgent, credentials: credentials, logger: logger, resuming: resuming,
                                      timelineStart: start) { ending in self?.connectionEnded(ending, generation: generation) }
                }, on: loop, configuration: configuration, logger: logger)
            } catch let redirect as RTSPClientConnection.Redirect {
                let target = RTSPURI.isAbsolute(redirect.location) ? redirect.location
                    : redirect.location.hasPrefix("/") ? String(url.prefix { $0 != "/" }) + "//" + url.dropFirst(url.prefix { $0 != "/" }.count + 2).prefix { $0 != "/" } + redirect.location
                    : RTSPURI.resolve(redirect.location, against: url)
                let next = RTSPURI.removingUserInfo(target)
                let path = (visited + [next]).joined(separator: " → ")
                if RTSPURI.isSecure(url) && !RTSPURI.isSecure(next) {
                    throw RTSPClientError(.redirect, "\(redirect.request): \(redirect.status) to \(next): out of TLS (\(path))", status: redirect.status)
                }
                if visited.contains(next) {
                    throw RTSPClientError(.redirect, "\(redirect.request): \(redirect.status) to \(next): a redirect loop (\(path))", status: redirect.status)
                }
                guard visited.count <= 3 else {
                    throw RTSPClientError(.redirect, "\(redirect.request): \(redirect.status): more than 3 redirects (\(path))", status: redirect.status)
                }
                logger.info("\(redirect.request): \(redirect.status): redirected to \(next)")
                let sameHost = (try? RTSPURI.hostAndPort(of: next).0) == (try? RTSPURI.hostAndPort(of: url).0)
                credentials = RTSPCredentials(userInfoOf: target) ?? (sameHost ? credentials : nil)
                visited.append(next)
                url = next
            }
        }
    }

    /// Makes `connection` the one that plays (on the loop, so that a handler that ended
    /// before is seen); false when the client is closing (the connection is then closed). After
    /// a reconnection, ``Event/reconnected(_:)`` goes out there, before the events its handler
    /// held since PLAY.
    @discardableResult
    func install(_ connection: RTSPClientConnection, reconnection: Reconnection? = nil) async throws -> Bool {
        let installed = try await loop.submit { [state] in
            let (closing, generation) = state.withLock { state in
                guard state.closing == nil else { return (true, 0) }
                state.connection = connection
                state.installedGeneration = state.generation
                return (false, state.generation)
            }
            if !closing, let reconnection { connection.handler.value.release(after: .reconnected(reconnection)) }
            // A handler that ended before it was installed: its ending was not taken then.
            if !closing, let ending = connection.handler.value.ending { self.connectionEnded(ending, generation: generation) }
            return !closing
        }.get()
        if !installed { await connection.close(ending: .closed, teardownTimeout: configuration.teardownTimeout, logger: logger) }
        return installed
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
}
