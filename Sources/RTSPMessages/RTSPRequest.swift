/// One RTSP 1.0 request (RFC 2326 clause 6): the request line, the header fields in the order
/// they came, and the body.
///
/// Read by ``RTSPMessageReader``; header names are matched without regard to case.
public struct RTSPRequest: Hashable, Sendable {
    /// The method token, as sent (methods are case-sensitive: `OPTIONS`, `DESCRIBE`, `SETUP` …).
    public var method: String
    /// The Request-URI: an absolute `rtsp://` URL, or `*` (OPTIONS).
    public var uri: String
    /// The protocol version of the request line, `RTSP/1.0`.
    public var version: String
    /// The header fields as (name, value) pairs, values without surrounding white space.
    public var headers: [(name: String, value: String)]
    /// The message body (`Content-Length` bytes), often empty.
    public var body: [UInt8]

    /// The methods of RFC 2326 clause 10; a request with another method gets 501 Not Implemented.
    public static let knownMethods: Set<String> = [
        "DESCRIBE", "ANNOUNCE", "GET_PARAMETER", "OPTIONS", "PAUSE", "PLAY", "RECORD", "REDIRECT", "SETUP",
        "SET_PARAMETER", "TEARDOWN",
    ]

    /// Creates a request.
    public init(method: String, uri: String, version: String = "RTSP/1.0", headers: [(name: String, value: String)] = [],
                body: [UInt8] = []) {
        self.method = method
        self.uri = uri
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The value of the first header field named `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// `CSeq` (RFC 2326 clause 12.17), as sent; a response echoes it.
    public var cSeq: String? { header("CSeq") }

    /// The session identifier of the `Session` header (RFC 2326 clause 12.37), without its
    /// `;timeout=` parameter.
    public var session: String? {
        header("Session").map { value in
            String(value.prefix { $0 != ";" }).trimmingASCIIWhitespace()
        }
    }

    /// The request as bytes on the wire: request line, header lines, empty line (all CRLF), body.
    public var bytes: [UInt8] {
        var text = "\(method) \(uri) \(version)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8) + body
    }

    /// Equal when method, URI, version, header fields (in order) and body are equal.
    public static func == (a: RTSPRequest, b: RTSPRequest) -> Bool {
        a.method == b.method && a.uri == b.uri && a.version == b.version && a.body == b.body
            && a.headers.count == b.headers.count && zip(a.headers, b.headers).allSatisfy { $0 == $1 }
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(uri)
        hasher.combine(version)
        for (name, value) in headers {
            hasher.combine(name)
            hasher.combine(value)
        }
        hasher.combine(body)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingASCIIWhitespace() -> String {
        let isSpace = { (c: Character) in c == " " || c == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
