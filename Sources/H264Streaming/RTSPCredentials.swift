/// A user name and password for an RTSP server that asks for them (`401 Unauthorized`): sent
/// with Basic or Digest authentication (RFC 2617, RFC 7616), whichever is the strongest the
/// server offers.
///
/// Printing a value shows the user, never the password.
///
/// ```swift
/// var configuration = RTSPClient.Configuration()
/// configuration.credentials = RTSPCredentials(user: "admin", password: "secret")
/// ```
public struct RTSPCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Credentials of `user` with `password`.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The user info of `rtsp://USER:PASSWORD@HOST/…`, percent-decoded (`%40` is `@`); nil when
    /// the URL has none. A user without `:PASSWORD` has an empty password.
    public init?(userInfoOf url: String) {
        guard let userInfo = RTSPURI.userInfo(of: url) else { return nil }
        let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        user = Self.percentDecoded(parts[0])
        password = parts.count > 1 ? Self.percentDecoded(parts[1]) : ""
    }

    /// `Credentials(user: "USER", password: <redacted>)`.
    public var description: String { "Credentials(user: \"\(user)\", password: <redacted>)" }

    /// The same as ``description``: the password stays out of debug output too.
    public var debugDescription: String { description }

    /// `text` with each `%XX` replaced by its byte; a `%` without two hex digits stays as it is.
    static func percentDecoded(_ text: Substring) -> String {
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = RTSPDigest.hexValue(bytes[index + 1]), let low = RTSPDigest.hexValue(bytes[index + 2]) {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
