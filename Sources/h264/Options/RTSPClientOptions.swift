import ArgumentParser
import H264
import H264Streaming

/// How `h264 receive rtsp://…` and `h264 relay rtsp://…` play a camera: the transport, the
/// credentials, reconnection, the certificate an `rtsps://` camera must present.
struct RTSPClientOptions: ParsableArguments {
    /// The lower transport `--transport` asks an RTSP server for.
    enum Transport: String, ExpressibleByArgument, CaseIterable { case auto, tcp, udp }

    @Option(help: "With an rtsp:// URL: the RTP transport, auto (UDP, then TCP interleaved if the server answers 461 or no packet arrives within 3 s of PLAY), tcp or udp.")
    var transport: Transport = .auto
    @Option(help: "With an rtsp:// URL: the user name for a server that asks for one (401); or give rtsp://USER:PASSWORD@HOST/….")
    var user: String?
    @Option(help: "With an rtsp:// URL: the password of --user.") var password: String?
    @Flag(help: "With an rtsp:// URL (and on relay an rtmp:// SOURCE or --rtmp): keep trying a camera that is not there yet, and when the connection is lost or the camera is silent for --idle-timeout (receive; relay: 10 s), reconnect (after --reconnect-delay, doubling up to --reconnect-max-delay, without a limit) and go on from the next IDR, the times going on across the gap; --frames counts across reconnections.")
    var reconnect = false
    @Option(help: "With --reconnect: the seconds to wait before the first try.") var reconnectDelay: Double = 1
    @Option(help: "With --reconnect: the most seconds to wait between tries.") var reconnectMaxDelay: Double = 30
    @Option(help: ArgumentHelp("With an rtsps:// URL: the certificates to trust: system (the system's roots, the default), a PEM file (only those), sha256:HEX (only the one with this fingerprint) or any (no check: encrypted, but not authenticated).",
                               valueName: "trust"))
    var tlsTrust = "system"

    func validate() throws {
        if password != nil && user == nil { throw ValidationError("--password needs --user") }
        guard reconnectDelay > 0, reconnectMaxDelay >= reconnectDelay else {
            throw ValidationError("--reconnect-delay must be positive and at most --reconnect-max-delay")
        }
    }

    /// The client configuration these options ask for (a PEM file of `--tls-trust` loaded).
    func configuration() throws -> RTSPClient.Configuration {
        var configuration = RTSPClient.Configuration()
        do { configuration.tlsTrust = try RTSPTLSTrust(argument: tlsTrust) } catch { throw CLIError("--tls-trust: \(error)") }
        configuration.transport = switch transport {
        case .auto: .automatic
        case .tcp: .tcp
        case .udp: .udp
        }
        configuration.credentials = user.map { RTSPCredentials(user: $0, password: password ?? "") }
        configuration.reconnect = reconnection
        return configuration
    }

    /// The policy of `--reconnect` (for the camera, and for `--rtmp` publishing); nil without it.
    var reconnection: RTSPClient.Configuration.Reconnect? { reconnect ? .init(initialDelay: .seconds(reconnectDelay), maximumDelay: .seconds(reconnectMaxDelay)) : nil }

    /// The events of `client`; disconnections (an idle one named with `idleTimeout`, in
    /// seconds), reconnections and resumptions go to `log` and to `eventLog` (`ReceiveEvent`) instead.
    static func events(of client: RTSPClient, idleTimeout: Double, log: @escaping @Sendable (String) -> Void,
                       eventLog: EventLog) -> some AsyncSequence<RTSPClient.Event, Never> {
        client.compactMap { event -> RTSPClient.Event? in
            switch event {
            case .frame, .loss, .diagnostic, .formatChanged: return event
            case .disconnected(let ending):
                let reason = describe(ending, idleTimeout: idleTimeout) ?? "closed"
                log("disconnected (\(reason)); reconnecting")
                eventLog.write(ReceiveEvent.disconnected(reason: reason))
            case .reconnected(let reconnection):
                log("reconnected after \(seconds(reconnection.downtime)) (\(reconnection.attempts) attempt(s)); resuming at the next IDR")
                eventLog.write(ReceiveEvent.reconnected(attempts: reconnection.attempts, downtime: reconnection.downtime / .seconds(1)))
            case .resumed(let gap):
                log("resumed at an IDR; \(seconds(gap)) without access units")
                eventLog.write(ReceiveEvent.resumed(gap: gap / .seconds(1)))
            }
            return nil
        }
    }

    /// `1.2 secs`.
    private static func seconds(_ duration: Duration) -> String {
        duration.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))
    }

    /// Why the events of a client ended, in words; nil for `close()`.
    static func describe(_ ending: RTSPClient.Ending?, idleTimeout: Double = 0) -> String? {
        switch ending {
        case .idle: "no packet for \(idleTimeout) s"
        case .serverClosed: "the server closed the connection"
        case .keepAliveFailed(let error): "the session ended: \(error)"
        case .closed, nil: nil
        }
    }
}
