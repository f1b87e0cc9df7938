/// The parts of an RTSP URL the servers and the client look at: the path, the host and port,
/// a control URL resolved against a base.
package enum RTSPURI {
    /// The path of an `rtsp://host[:port]/path` URI (or the URI itself when it has no scheme).
    package static func path(of uri: String) -> Substring {
        guard let scheme = uri.range(of: "://") else { return Substring(uri) }
        let rest = uri[scheme.upperBound...]
        return rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
    }

    /// `control` (an SDP `a=control:`) resolved against `base` (RFC 2326 appendix C.1.1): an
    /// absolute URL as is, `*` or nil the base itself (without a trailing `/`), else appended
    /// to the base.
    package static func resolve(_ control: String?, against base: String) -> String {
        guard let control, control != "*", !control.isEmpty else {
            return base.hasSuffix("/") ? String(base.dropLast()) : base
        }
        if isAbsolute(control) { return control }
        return base.hasSuffix("/") ? base + control : base + "/" + control
    }

    /// Whether `url` is an `rtsp://` or `rtsps://` URL (any case).
    package static func isAbsolute(_ url: String) -> Bool {
        let lowered = url.prefix(8).lowercased()
        return lowered.hasPrefix("rtsp://") || lowered.hasPrefix("rtsps://")
    }

    /// Whether `url` is an `rtsps://` URL: RTSP over TLS (default port 322).
    package static func isSecure(_ url: String) -> Bool { url.prefix(8).lowercased() == "rtsps://" }

    /// `HOST` and `PORT` of `rtsp://[USER@]HOST[:PORT][/PATH]` (or `rtsps://`; the default
    /// ports are 554 and 322); an IPv6 host is in brackets. Port 0 (any free port) only where
    /// `allowingPortZero` (a URL to listen on).
    package static func hostAndPort(of url: String, allowingPortZero: Bool = false) throws(RTSPClientError) -> (String, Int) {
        guard isAbsolute(url) else { throw RTSPClientError(.badURL, "\(url) is not an rtsp:// or rtsps:// URL") }
        var authority = url.drop { $0 != ":" }.dropFirst(3).prefix { $0 != "/" && $0 != "?" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = authority, portText: Substring?
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if rest.hasPrefix(":") { portText = rest.dropFirst() }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { throw RTSPClientError(.badURL, "\(url): no host") }
        guard let portText else { return (String(host), isSecure(url) ? 322 : 554) }
        guard let port = Int(portText), ((allowingPortZero ? 0 : 1)...65_535).contains(port) else { throw RTSPClientError(.badURL, "\(url): bad port \(portText)") }
        return (String(host), port)
    }

    /// The user info of `SCHEME://USERINFO@HOST…` (still percent-encoded), or nil.
    package static func userInfo(of url: String) -> Substring? {
        guard let scheme = url.range(of: "://") else { return nil }
        let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.lastIndex(of: "@").map { authority[..<$0] }
    }

    /// `url` without its user info (`rtsp://user:pass@host/p` → `rtsp://host/p`): what is sent as
    /// a Request-URI and what messages name.
    package static func removingUserInfo(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let userInfo = userInfo(of: url) else { return url }
        return String(url[..<scheme.upperBound]) + String(url[url.index(after: userInfo.endIndex)...])
    }
}
