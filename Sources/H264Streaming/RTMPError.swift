public import H264

/// Why an RTMP publish failed: a code to branch on and a one-line message naming the URL and
/// the step (`publish rtmp://…/live/key: NetStream.Publish.BadName`).
public struct RTMPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable {
        /// The URL is not `rtmp[s]://HOST[:PORT]/APP/KEY`.
        case badURL
        /// The server could not be reached.
        case connectionFailed
        /// The server closed the connection (during the handshake, before an answer, or while
        /// publishing).
        case connectionClosed
        /// The server did not answer the handshake or a command within its timeout.
        case timeout
        /// The server refused: `_error` to `connect` or `createStream`, or an `onStatus` other
        /// than `NetStream.Publish.Start` to `publish` (``RTMPError/statusCode``).
        case rejected
        /// The server's bytes broke RTMP (a bad chunk size, an oversized message, a bad AMF0
        /// value): ``RTMPError/underlying`` says which.
        case protocolViolation
        /// The TLS handshake of an `rtmps://` URL failed.
        case tls
        /// The publisher was used after ``RTMPPublisher/finish()``, or given a frame it cannot
        /// write (a composition time outside SI24).
        case invalidUse
    }

    /// What went wrong.
    public var code: Code
    /// The `code` of the server's `_error` or `onStatus` information object, for ``Code/rejected``.
    public var statusCode: String?
    /// The protocol error behind ``Code/protocolViolation`` or ``Code/invalidUse``.
    public var underlying: MediaError?
    /// The message.
    public var description: String

    /// An error with `code` and `description`.
    public init(_ code: Code, _ description: String, statusCode: String? = nil, underlying: MediaError? = nil) {
        self.code = code
        self.description = description
        self.statusCode = statusCode
        self.underlying = underlying
    }
}
