import ArgumentParser
import H264Streaming

/// Who may use the RTSP server of `h264 serve --rtsp`, `h264 relay` and `h264 receive
/// --listen`, and how privately: `--auth USER:PASSWORD` (repeatable) and `--auth-method
/// digest|basic`, as an `RTSPServer.Authentication`; `--tls-certificate` and `--tls-key` for
/// RTSPS, as an `RTSPTLSIdentity`.
struct ServerAccessOptions: ParsableArguments {
    /// How clients send their credentials.
    enum Method: String, ExpressibleByArgument, CaseIterable { case digest, basic }

    @Option(name: .customLong("auth"), help: ArgumentHelp(
        "Require this user and password of RTSP clients (repeat for more users); without it, anyone may connect.",
        discussion: """
        Requests without them get 401 Unauthorized. RTSP only: raw Annex-B over TCP (--port) has no authentication. \
        The password is visible to other users of this machine (ps).
        """,
        valueName: "user:password"))
    var users: [String] = []
    @Option(help: "With --auth: digest (RFC 7616, SHA-256 and MD5; the password never crosses the network) or basic (RFC 7617; readable by anyone on the path).")
    var authMethod: Method = .digest
    @Option(help: ArgumentHelp("Serve RTSPS (RTSP over TLS, rtsps:// URLs; RTP interleaved in it) with this certificate chain (PEM).",
                               valueName: "file.pem"))
    var tlsCertificate: String?
    @Option(help: ArgumentHelp("With --tls-certificate: its private key (PEM).", valueName: "file.pem")) var tlsKey: String?

    func validate() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) { throw ValidationError("--tls-certificate and --tls-key go together") }
        for user in users where !user.contains(":") || user.hasPrefix(":") {
            throw ValidationError("--auth wants USER:PASSWORD with a non-empty USER")
        }
    }

    /// The server's authentication; nil without `--auth`.
    var authentication: RTSPServer.Authentication? {
        guard !users.isEmpty else { return nil }
        let pairs = users.map { user in
            let parts = user.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        return RTSPServer.Authentication(users: Dictionary(pairs) { _, last in last },
                                         method: authMethod == .digest ? .digest : .basic)
    }

    /// The default server configuration with ``authentication`` and the TLS identity.
    func serverConfiguration() throws -> RTSPServer.Configuration {
        var configuration = RTSPServer.Configuration()
        try apply(to: &configuration)
        return configuration
    }

    /// Sets the authentication and the TLS identity (loaded from the files) of `configuration`.
    func apply(to configuration: inout RTSPServer.Configuration) throws {
        configuration.authentication = authentication
        if let tlsCertificate, let tlsKey {
            do {
                configuration.tls = try RTSPTLSIdentity(certificateChainFile: tlsCertificate, privateKeyFile: tlsKey)
            } catch {
                throw CLIError("RTSPS: \(error)")
            }
        }
    }
}
