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
    ///   (packetization-mode 2). Messages name the URL without its user info. With
    ///   ``Configuration/reconnect``, only the last try's error, once the tries have run out;
    ///   `CancellationError` when the calling task is cancelled while waiting between tries.
    ///
    /// With ``Configuration/reconnect`` the first connection is retried too, for a camera that
    /// boots after its recorder: a try that fails for what a server coming up cures — no
    /// connection (``RTSPClientError/Code/connectionFailed``), a connection closed or a request
    /// unanswered (``RTSPClientError/Code/connectionClosed``, ``RTSPClientError/Code/timeout``),
    /// or a `404`/`5xx` answer (a stream not published yet, a server starting) — is followed by
    /// another after the policy's backoff (``Configuration/Reconnect-swift.struct/initialDelay``,
    /// doubling up to ``Configuration/Reconnect-swift.struct/maximumDelay``), for at most
    /// ``Configuration/Reconnect-swift.struct/maximumAttempts`` tries (nil: until the camera
    /// answers, or the task is cancelled). Each failed try is logged at info level. Other errors
    /// (a bad URL, a final 401, a redirect loop, TLS, an SDP this client cannot receive) are
    /// thrown at once: waiting does not cure them.
    public static func open(url: String, group: any EventLoopGroup, configuration: Configuration = .init(),
                            logger: Logger = .streamingSilent) async throws -> RTSPClient {
        let client = RTSPClient(url: RTSPURI.removingUserInfo(url), credentials: configuration.credentials ?? RTSPCredentials(userInfoOf: url),
                                loop: group.next(), configuration: configuration, logger: logger)
        try await client.install(client.connectRetrying())
        client.continuation.onTermination = { [weak client] termination in
            if case .cancelled = termination, let client { Task { await client.close() } }
        }
        return client
    }

    /// The first connection: ``connect(resuming:)``, tried again after the reconnection
    /// policy's backoff (if any) while it fails for a reason a server coming up cures
    /// (``isCuredByWaiting(_:)``), at most `maximumAttempts` times; `CancellationError` once
    /// the task is cancelled.
    func connectRetrying() async throws -> RTSPClientConnection {
        guard let policy = configuration.reconnect else { return try await connect(resuming: false) }
        var delay = policy.initialDelay, attempts = 0
        while true {
            attempts += 1
            do {
                let connection = try await connect(resuming: false)
                // Cancelled while that try went on (a signal ending the wait): not wanted any more.
                if Task.isCancelled {
                    await connection.close(ending: .closed, teardownTimeout: configuration.teardownTimeout, logger: logger)
                    throw CancellationError()
                }
                return connection
            } catch let error where Self.isCuredByWaiting(error) && attempts < policy.maximumAttempts ?? .max {
                logger.info("\(error) (try \(attempts)); trying again in \(delay)")
            }
            try await Task.sleep(for: delay)
            delay = Swift.min(delay * 2, policy.maximumDelay)
        }
    }

    /// Whether a failed first connection may succeed later: nothing listening yet, a
    /// connection closed or unanswered, a `404` (a stream not published yet) or a `5xx` (a
    /// server starting).
    static func isCuredByWaiting(_ error: any Error) -> Bool {
        guard let error = error as? RTSPClientError else { return false }
        switch error.code {
        case .connectionFailed, .connectionClosed, .timeout: return true
        case .status: return error.status.map { $0.code == 404 || (500...599).contains($0.code) } ?? false
        case .badURL, .unauthorized, .badAnswer, .redirect, .tls: return false
        }
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
                    RTSPClientHandler(continuation: continuation, state: state, idleTimeout: configuration.effectiveIdleTimeout,
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
