/// One challenge of a `WWW-Authenticate` header (RFC 7235 clause 4.1, as RTSP uses it, RFC 2326
/// clause 12.44): a scheme (`Basic`, `Digest`) and its parameters (`realm`, `nonce`, `qop` …).
///
/// ```swift
/// let challenges = RTSPAuthenticationChallenge.parse(
///     #"Digest realm="cam", nonce="a1b2", algorithm=SHA-256, qop="auth", Basic realm="cam""#)
/// challenges.map(\.scheme)           // ["digest", "basic"]
/// challenges[0].parameter("Nonce")   // "a1b2"
/// ```
///
/// `parse(_:)` takes real-world formatting: quoted and unquoted values, commas and escaped
/// quotes inside quotes, several challenges in one header, missing commas between parameters,
/// any case in scheme and parameter names. It never traps: what it cannot read it skips.
public struct RTSPAuthenticationChallenge: Hashable, Sendable {
    /// The scheme, lowercased: `basic`, `digest`, or any other token a server sends.
    public var scheme: String
    /// The parameters in the order they came, names lowercased, values unquoted.
    public var parameters: [Parameter]

    /// One `name=value` of a challenge.
    public struct Parameter: Hashable, Sendable {
        /// The name, lowercased.
        public var name: String
        /// The value, without quotes and with `\`-escapes resolved.
        public var value: String

        /// A parameter (`name` is lowercased).
        public init(name: String, value: String) {
            self.name = name.lowercased()
            self.value = value
        }
    }

    /// A challenge (`scheme` is lowercased).
    public init(scheme: String, parameters: [Parameter] = []) {
        self.scheme = scheme.lowercased()
        self.parameters = parameters
    }

    /// The value of the first parameter named `name` (case-insensitive), or nil.
    public func parameter(_ name: String) -> String? {
        let wanted = name.lowercased()
        return parameters.first { $0.name == wanted }?.value
    }

    /// The challenges of one `WWW-Authenticate` value, in order. A token followed by `=` is a
    /// parameter of the challenge before it; any other token starts a new challenge. A parameter
    /// before any scheme, a stray `=` or quote, and an unterminated quoted value (taken up to the
    /// end) are tolerated.
    public static func parse(_ header: String) -> [RTSPAuthenticationChallenge] {
        var scanner = Scanner(bytes: Array(header.utf8))
        var challenges: [RTSPAuthenticationChallenge] = []
        while true {
            scanner.skip { $0 == .space || $0 == .tab || $0 == .comma }
            guard let next = scanner.peek() else { break }
            let token = scanner.token()
            if token.isEmpty {
                if next == .quote { _ = scanner.quoted() } else { scanner.advance() }
                continue
            }
            scanner.skip { $0 == .space || $0 == .tab }
            if scanner.peek() == .equals {
                scanner.advance()
                scanner.skip { $0 == .space || $0 == .tab }
                let value = scanner.peek() == .quote ? scanner.quoted() : Array(scanner.token(allowingEquals: true))
                if !challenges.isEmpty {
                    challenges[challenges.count - 1].parameters.append(Parameter(name: String(decoding: token, as: UTF8.self),
                                                                                 value: String(decoding: value, as: UTF8.self)))
                }
            } else {
                challenges.append(RTSPAuthenticationChallenge(scheme: String(decoding: token, as: UTF8.self)))
            }
        }
        return challenges
    }

    /// `value` as a quoted string (RFC 7230 clause 3.2.6): `"` and `\` escaped with `\`; CR and
    /// LF dropped, so the value cannot break the header line.
    public static func quoted(_ value: String) -> String {
        var text = "\""
        for scalar in value.unicodeScalars where scalar != "\r" && scalar != "\n" {
            if scalar == "\"" || scalar == "\\" { text += "\\" }
            text.unicodeScalars.append(scalar)
        }
        return text + "\""
    }
}

/// A cursor over the bytes of a header value; every read stops at the end.
private struct Scanner {
    let bytes: [UInt8]
    var index = 0

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func advance() { if index < bytes.count { index += 1 } }

    mutating func skip(while predicate: (UInt8) -> Bool) {
        while index < bytes.count, predicate(bytes[index]) { index += 1 }
    }

    /// The bytes up to white space, a comma, a quote or (unless `allowingEquals`) `=`.
    mutating func token(allowingEquals: Bool = false) -> ArraySlice<UInt8> {
        let start = index
        skip { $0 != .space && $0 != .tab && $0 != .comma && $0 != .quote && (allowingEquals || $0 != .equals) }
        return bytes[start..<index]
    }

    /// A quoted string starting at the opening quote, its escapes resolved; unterminated, the
    /// rest of the bytes.
    mutating func quoted() -> [UInt8] {
        advance()
        var value: [UInt8] = []
        while let byte = peek() {
            advance()
            if byte == .quote { break }
            if byte == .backslash, let escaped = peek() {
                advance()
                value.append(escaped)
            } else {
                value.append(byte)
            }
        }
        return value
    }
}

extension UInt8 {
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
}
