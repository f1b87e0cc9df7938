public import H264
public import RTSPMessages

/// Why an ``RTSPClient`` could not play a URL: a code to branch on and a one-line message
/// (`DESCRIBE rtsp://…/cam: 404 Not Found`).
public struct RTSPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable {
        /// The URL is not `rtsp://HOST[:PORT][/PATH]` (or `rtsps://`).
        case badURL
        /// The server could not be reached.
        case connectionFailed
        /// The server answered with another status than 200 (``RTSPClientError/status``).
        case status
        /// The server answered `401 Unauthorized` and the credentials cannot fix it: none were
        /// given, the server offers no scheme this client speaks, or they were refused (wrong
        /// user or password).
        case unauthorized
        /// The server closed the connection before answering.
        case connectionClosed
        /// The server did not answer within the request timeout.
        case timeout
        /// The answer lacks what the client needs (a usable SDP, a `Session`), or the server's
        /// bytes are not RTSP.
        case badAnswer
        /// A redirect (`3xx` with `Location`) that leads back to a URL already visited, or a
        /// fourth redirect in a row.
        case redirect
        /// The TLS handshake of an `rtsps://` URL failed: the server's certificate is not
        /// trusted (``RTSPClient/Configuration/tlsTrust``), or the server does not speak TLS.
        case tls
    }

    /// What went wrong.
    public var code: Code
    /// The server's status, for ``Code/status``.
    public var status: RTSPStatus?
    /// The message, naming the request and the URL.
    public var description: String

    /// An error with `code` and `description`.
    public init(_ code: Code, _ description: String, status: RTSPStatus? = nil) {
        self.code = code
        self.description = description
        self.status = status
    }
}
