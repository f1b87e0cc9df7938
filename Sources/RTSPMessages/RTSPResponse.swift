/// One RTSP 1.0 response (RFC 2326 clause 7): status line, header fields, body.
///
/// ```swift
/// let response = RTSPResponse(status: .ok, cSeq: request.cSeq,
///                             headers: [("Public", "OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN")])
/// channel.write(response.bytes)
/// ```
public struct RTSPResponse: Hashable, Sendable {
    /// The status.
    public var status: RTSPStatus
    /// The header fields, in order (`CSeq` first when the request had one).
    public var headers: [(name: String, value: String)]
    /// The body; `Content-Length` is added for a non-empty one.
    public var body: [UInt8]

    /// Creates a response that echoes `cSeq` (clause 12.17: every response carries the
    /// request's CSeq).
    public init(status: RTSPStatus, cSeq: String?, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = (cSeq.map { [("CSeq", $0)] } ?? []) + headers
        self.body = body
    }

    /// The value of the first header field named `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The response on the wire: status line, header lines, `Content-Length` when there is a
    /// body, the empty line (all CRLF), the body. Header values lose any CR or LF, so a value
    /// taken from a request cannot inject lines.
    public var bytes: [UInt8] {
        var text = "RTSP/1.0 \(status.code) \(status.reasonPhrase)\r\n"
        for (name, value) in headers {
            // By scalar: "\r\n" is one Character.
            var clean = String.UnicodeScalarView()
            clean.append(contentsOf: value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
            text += "\(name): \(String(clean))\r\n"
        }
        if !body.isEmpty { text += "Content-Length: \(body.count)\r\n" }
        return Array((text + "\r\n").utf8) + body
    }

    /// Equal when status, header fields (in order) and body are equal.
    public static func == (a: RTSPResponse, b: RTSPResponse) -> Bool {
        a.status == b.status && a.body == b.body && a.headers.count == b.headers.count
            && zip(a.headers, b.headers).allSatisfy { $0 == $1 }
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        for (name, value) in headers {
            hasher.combine(name)
            hasher.combine(value)
        }
        hasher.combine(body)
    }
}
