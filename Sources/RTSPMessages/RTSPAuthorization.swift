public import MediaCore
/// The credentials of an `Authorization` header (RFC 7235 clause 4.2, as RTSP uses it, RFC 2326
/// clause 12.5), as a server reads them: a scheme and either a token (Basic's
/// `BASE64(user:password)`, RFC 7617) or parameters (Digest's `username`, `realm`, `nonce`,
/// `uri`, `response` …, RFC 7616 clause 3.4).
///
/// ```swift
/// let authorization = RTSPAuthorization.parse(#"Digest username="Mufasa", nonce="a1b2", response="6629fae4""#)
/// authorization?.scheme                  // "digest"
/// authorization?.parameter("username")   // "Mufasa"
/// RTSPAuthorization.parse("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")?.basicCredentials
///                                        // ("Aladdin", "open sesame")
/// ```
///
/// The parameters are read by ``RTSPAuthenticationChallenge/parse(_:)`` (the same rules as a
/// `WWW-Authenticate`: quoted or not, escapes, missing commas, any case in names), so
/// ``parse(_:)`` never traps; what it cannot read it skips.
public struct RTSPAuthorization: Hashable, Sendable {
    /// The scheme, lowercased: `basic`, `digest`, or any other token a client sends.
    public var scheme: String
    /// The token after the scheme when it is one `token68` (RFC 7235 clause 2.1: Basic's
    /// credentials); nil when the scheme is followed by parameters or by nothing.
    public var token: String?
    /// The parameters in the order they came, names lowercased, values unquoted; empty with a
    /// ``token``.
    public var parameters: [RTSPAuthenticationChallenge.Parameter]

    /// Credentials of `scheme` (lowercased) with a token or with parameters.
    public init(scheme: String, token: String? = nil, parameters: [RTSPAuthenticationChallenge.Parameter] = []) {
        self.scheme = scheme.lowercased()
        self.token = token
        self.parameters = parameters
    }

    /// The value of the first parameter named `name` (case-insensitive), or nil.
    public func parameter(_ name: String) -> String? {
        let wanted = name.lowercased()
        return parameters.first { $0.name == wanted }?.value
    }

    /// Basic's user and password: the ``token`` decoded from base64 and split at its first `:`;
    /// nil for another scheme, a token that is not base64, or one without `:`.
    public var basicCredentials: (user: String, password: String)? {
        guard scheme == "basic", let token, let bytes = try? Base64.decode(token),
              let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return (String(decoding: bytes[..<colon], as: UTF8.self), String(decoding: bytes[(colon + 1)...], as: UTF8.self))
    }

    /// The credentials of one `Authorization` value: the first word is the scheme; the rest is
    /// its token when it is one `token68`, else its parameters (a stray word among them is
    /// skipped, its parameters kept). Nil when the value is empty or its first word is no token
    /// (it holds `=`, `,` or `"`).
    public static func parse(_ value: String) -> RTSPAuthorization? {
        // Split on bytes, not characters: a space followed by a combining mark is one character.
        let bytes = Array(value.utf8)
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let start = bytes.firstIndex { !isBlank($0) } ?? bytes.endIndex
        let end = bytes[start...].firstIndex(where: isBlank) ?? bytes.endIndex
        let scheme = bytes[start..<end]
        guard !scheme.isEmpty, !scheme.contains(where: { "=,\"\r\n".utf8.contains($0) }) else { return nil }
        let restStart = bytes[end...].firstIndex { !isBlank($0) } ?? bytes.endIndex
        let restEnd = (bytes[restStart...].lastIndex { !isBlank($0) } ?? restStart - 1) + 1
        let rest = String(decoding: bytes[restStart..<max(restStart, restEnd)], as: UTF8.self)
        let name = String(decoding: scheme, as: UTF8.self)
        if isToken68(rest) { return RTSPAuthorization(scheme: name, token: rest) }
        // A placeholder scheme so that the first parameter has a challenge to belong to.
        let parameters = RTSPAuthenticationChallenge.parse("x " + rest).flatMap(\.parameters)
        return RTSPAuthorization(scheme: name, parameters: parameters)
    }

    /// The header value: `scheme token`, or `scheme name="value", …` (values quoted by
    /// ``RTSPAuthenticationChallenge/quoted(_:)``).
    public var text: String {
        if let token { return scheme + " " + token }
        guard !parameters.isEmpty else { return scheme }
        return scheme + " " + parameters.map { "\($0.name)=" + RTSPAuthenticationChallenge.quoted($0.value) }.joined(separator: ", ")
    }

    /// True for one `token68`: letters, digits, `-._~+/`, then any `=`.
    private static func isToken68(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let body = bytes.prefix { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: "-._~+/".utf8.contains(byte)
            }
        }
        return !body.isEmpty && bytes.dropFirst(body.count).allSatisfy { $0 == UInt8(ascii: "=") }
    }
}
