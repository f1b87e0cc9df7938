public import MediaCore
/// An RTSP status code and its reason phrase (RFC 2326 clause 7.1.1).
public struct RTSPStatus: Hashable, Sendable, CustomStringConvertible {
    /// The three-digit status code.
    public var code: Int
    /// The reason phrase sent after it.
    public var reasonPhrase: String

    /// Creates a status.
    public init(code: Int, reasonPhrase: String) {
        self.code = code
        self.reasonPhrase = reasonPhrase
    }

    /// `200 OK`.
    public static let ok = RTSPStatus(code: 200, reasonPhrase: "OK")
    /// `400 Bad Request`: malformed syntax (and, without a better code in RTSP 1.0, a header
    /// section over the server's limit).
    public static let badRequest = RTSPStatus(code: 400, reasonPhrase: "Bad Request")
    /// `401 Unauthorized`: the request needs credentials (sent with `WWW-Authenticate`), or
    /// those it carries are wrong or their nonce has expired.
    public static let unauthorized = RTSPStatus(code: 401, reasonPhrase: "Unauthorized")
    /// `404 Not Found`: no such presentation.
    public static let notFound = RTSPStatus(code: 404, reasonPhrase: "Not Found")
    /// `405 Method Not Allowed`: a method of RFC 2326 that this resource does not allow; the
    /// response lists the allowed ones in `Allow` (clause 11.4.1).
    public static let methodNotAllowed = RTSPStatus(code: 405, reasonPhrase: "Method Not Allowed")
    /// `408 Request Timeout`: the request did not arrive in time.
    public static let requestTimeout = RTSPStatus(code: 408, reasonPhrase: "Request Timeout")
    /// `413 Request Entity Too Large`: a body over the server's limit.
    public static let requestEntityTooLarge = RTSPStatus(code: 413, reasonPhrase: "Request Entity Too Large")
    /// `414 Request-URI Too Large`: a request line over the server's limit.
    public static let requestURITooLarge = RTSPStatus(code: 414, reasonPhrase: "Request-URI Too Large")
    /// `453 Not Enough Bandwidth`: the request was refused for lack of capacity, e.g. a
    /// second publisher where a server records one at a time.
    public static let notEnoughBandwidth = RTSPStatus(code: 453, reasonPhrase: "Not Enough Bandwidth")
    /// `454 Session Not Found`: the `Session` header names no session of this server.
    public static let sessionNotFound = RTSPStatus(code: 454, reasonPhrase: "Session Not Found")
    /// `455 Method Not Valid in This State`: e.g. PLAY before SETUP.
    public static let methodNotValidInThisState = RTSPStatus(code: 455, reasonPhrase: "Method Not Valid in This State")
    /// `459 Aggregate Operation Not Allowed`: the operation names the presentation where it
    /// must name a stream.
    public static let aggregateOperationNotAllowed = RTSPStatus(code: 459, reasonPhrase: "Aggregate Operation Not Allowed")
    /// `461 Unsupported Transport`: no transport of the `Transport` header can be served.
    public static let unsupportedTransport = RTSPStatus(code: 461, reasonPhrase: "Unsupported transport")
    /// `500 Internal Server Error`.
    public static let internalServerError = RTSPStatus(code: 500, reasonPhrase: "Internal Server Error")
    /// `501 Not Implemented`: a method this server does not know.
    public static let notImplemented = RTSPStatus(code: 501, reasonPhrase: "Not Implemented")
    /// `503 Service Unavailable`: e.g. too many sessions.
    public static let serviceUnavailable = RTSPStatus(code: 503, reasonPhrase: "Service Unavailable")
    /// `505 RTSP Version not supported`.
    public static let rtspVersionNotSupported = RTSPStatus(code: 505, reasonPhrase: "RTSP Version not supported")

    /// The answer to a request that ``RTSPMessageReader`` refused: 414 for a request line over
    /// the limit, 413 for a body over it, 505 for another version than RTSP/1.0, 461 for an
    /// unreadable `Transport`, 400 otherwise.
    public init(for error: MediaError) {
        switch (error.code, error.field) {
        case (.rtspMessageTooLarge, "Request-Line"): self = .requestURITooLarge
        case (.rtspMessageTooLarge, "Content-Length"): self = .requestEntityTooLarge
        case (.unsupportedRTSPVersion, _): self = .rtspVersionNotSupported
        case (.invalidTransport, _): self = .unsupportedTransport
        default: self = .badRequest
        }
    }

    /// `CODE Reason-Phrase`.
    public var description: String { "\(code) \(reasonPhrase)" }
}
