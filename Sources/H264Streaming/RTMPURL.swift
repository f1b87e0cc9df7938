/// An RTMP publishing or playing URL, `rtmp://HOST[:PORT]/APP/KEY` (or `rtmps://`), split the
/// way FFmpeg and OBS split it: the first path segment is the application, the rest (query
/// included) is the stream key.
public struct RTMPURL: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address (without brackets for IPv6).
    public var host: String
    /// The port: the URL's, else 1935 (`rtmp`) or 443 (`rtmps`).
    public var port: Int
    /// True for `rtmps://` (RTMP over TLS).
    public var isSecure: Bool
    /// The application (`live`).
    public var app: String
    /// The stream key (`key`, or `key?token=…`).
    public var streamKey: String

    /// Parses `url`.
    ///
    /// - Parameters:
    ///   - url: `rtmp[s]://HOST[:PORT]/APP/KEY`.
    ///   - allowingPortZero: accept port 0 (a server that takes any free port).
    /// - Throws: ``RTMPError/Code/badURL`` when it is not `rtmp[s]://HOST[:PORT]/APP/KEY`.
    public init(_ url: String, allowingPortZero: Bool = false) throws(RTMPError) {
        let lower = url.lowercased()
        guard lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://") else {
            throw RTMPError(.badURL, "\(url) is not an rtmp:// or rtmps:// URL")
        }
        isSecure = lower.hasPrefix("rtmps://")
        let rest = url.drop { $0 != ":" }.dropFirst(3)
        var authority = String(rest.prefix { $0 != "/" })
        let path = rest.dropFirst(authority.count).drop { $0 == "/" }
        let hasPort = authority.hasPrefix("[") ? authority.contains("]:") : authority.contains(":")
        if !hasPort { authority += isSecure ? ":443" : ":1935" }
        // The one authority rule of this module (brackets, user info, port range).
        do {
            (host, port) = try RTSPURI.hostAndPort(of: "rtsp://" + authority, allowingPortZero: allowingPortZero)
        } catch {
            throw RTMPError(.badURL, "\(url): \(error.description.replacingOccurrences(of: "rtsp://" + authority + ": ", with: ""))")
        }
        let slash = path.firstIndex(of: "/")
        app = String(path[..<(slash ?? path.endIndex)])
        streamKey = slash.map { String(path[path.index(after: $0)...]) } ?? ""
        guard !app.isEmpty, !streamKey.isEmpty else {
            throw RTMPError(.badURL, "\(url): the URL must name an application and a stream key (rtmp://HOST/APP/KEY)")
        }
    }

    /// The `tcUrl` of `connect`: the URL up to the application.
    public var tcUrl: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(isSecure ? "rtmps" : "rtmp")://\(shownHost):\(port)/\(app)"
    }

    /// The URL, `tcUrl/KEY`.
    public var description: String { "\(tcUrl)/\(streamKey)" }
}
