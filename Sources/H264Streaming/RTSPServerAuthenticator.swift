import Crypto
import H264
import RTSPMessages

/// The server side of RTSP authentication, without I/O: takes a request and says whether its
/// `Authorization` lets it through (``RTSPServer/Authentication``'s users, method and realm;
/// Digest nonces from `RTSPDigestNonces`), or gives the `401 Unauthorized` to send, with its
/// challenges, and the reason to log (never a password).
///
/// Digest (RFC 7616 clause 3.4; RFC 2069's form without `qop`, which GStreamer sends): the
/// `username` must be a user, the `realm` ours, the `algorithm` MD5 or SHA-256 (none: MD5;
/// the `-sess` variants are not offered), `qop` absent or `auth` (then with `nc` and `cnonce`;
/// any `nc` is taken: nonces have no table to count in), the nonce made here, and the `uri`
/// the Request-URI — or, as GStreamer names its connection's URL in every request, a URI of the
/// same protected path (the path or below it; another path's digest is refused). The
/// `response` is compared in constant time; an unknown user costs the same hashing as a known
/// one. A right response with an expired nonce gets `stale=TRUE`.
///
/// Basic: the user's password, compared as SHA-256 digests in constant time.
struct RTSPServerAuthenticator: Sendable {
    /// What to do with a request.
    enum Verdict: Equatable {
        /// Let it through: `user` proved who they are.
        case allowed(user: String)
        /// Answer `response` (401 with `WWW-Authenticate`); `reason` is for the log.
        case refused(RTSPResponse, reason: String)
    }

    let authentication: RTSPServer.Authentication
    let nonces: RTSPDigestNonces

    /// The verdict on `request` for the protected `path` (a mount path, `/live`), at `now`.
    func check(_ request: RTSPRequest, path: String, at now: ContinuousClock.Instant) -> Verdict {
        guard let header = request.header("Authorization") else { return refuse(request, at: now, "no credentials") }
        guard let authorization = RTSPAuthorization.parse(header), authorization.scheme == authentication.method.rawValue else {
            return refuse(request, at: now, "credentials not of the \(authentication.method.rawValue) scheme")
        }
        switch authentication.method {
        case .basic: return checkBasic(authorization, request, at: now)
        case .digest: return checkDigest(authorization, request, path: path, at: now)
        }
    }

    private func checkBasic(_ authorization: RTSPAuthorization, _ request: RTSPRequest, at now: ContinuousClock.Instant) -> Verdict {
        guard let (user, password) = authorization.basicCredentials else { return refuse(request, at: now, "malformed Basic credentials") }
        let expected = authentication.users[user]
        // Equal-length digests of the two passwords, compared to the end.
        let matches = RTSPDigest.constantTimeEqual(Array(SHA256.hash(data: Array(password.utf8))),
                                                   Array(SHA256.hash(data: Array((expected ?? "\u{0}").utf8))))
        guard let _ = expected, matches else { return refuse(request, at: now, Self.wrong(user, known: expected != nil)) }
        return .allowed(user: user)
    }

    private func checkDigest(_ authorization: RTSPAuthorization, _ request: RTSPRequest, path: String,
                             at now: ContinuousClock.Instant) -> Verdict {
        guard let user = authorization.parameter("username"), let nonce = authorization.parameter("nonce"),
              let uri = authorization.parameter("uri"), let response = authorization.parameter("response") else {
            return refuse(request, at: now, "Digest credentials without username, nonce, uri or response")
        }
        guard authorization.parameter("realm") == authentication.realm else { return refuse(request, at: now, "another realm") }
        let name = authorization.parameter("algorithm")
        guard let algorithm = RTSPDigest.Algorithm(name: name), name?.uppercased().hasSuffix("-SESS") != true else {
            return refuse(request, at: now, "unsupported algorithm \(name ?? "")")
        }
        let qop = authorization.parameter("qop")
        let nc = authorization.parameter("nc") ?? "", cnonce = authorization.parameter("cnonce") ?? ""
        guard qop == nil || (qop?.lowercased() == "auth" && !nc.isEmpty && !cnonce.isEmpty) else {
            return refuse(request, at: now, "unsupported qop")
        }
        guard Self.uri(uri, names: request.uri, protectedPath: path) else {
            return refuse(request, at: now, "digest uri \(uri) does not name \(request.uri)")
        }
        let freshness = nonces.freshness(of: nonce, at: now, lifetime: authentication.nonceLifetime)
        guard freshness != .unknown else { return refuse(request, at: now, "a nonce not made here") }
        let password = authentication.users[user]
        let expected = RTSPDigest.response(algorithm, user: user, realm: authentication.realm, password: password ?? "",
                                           nonce: nonce, nc: nc, cnonce: cnonce, qop: qop.map { _ in "auth" },
                                           method: request.method, uri: uri)
        let matches = RTSPDigest.constantTimeEqual(Array(expected.utf8), Array(response.lowercased().utf8))
        guard password != nil, matches else { return refuse(request, at: now, Self.wrong(user, known: password != nil)) }
        guard freshness == .fresh else { return refuse(request, at: now, "an expired nonce", stale: true) }
        return .allowed(user: user)
    }

    /// True when a digest's `uri` may stand for the Request-URI `requestURI`: it is that URI,
    /// or names the protected path or a path below it.
    static func uri(_ uri: String, names requestURI: String, protectedPath: String) -> Bool {
        if uri == requestURI { return true }
        let named = RTSPMounts.normalized(String(RTSPURI.path(of: uri).prefix { $0 != "?" }))
        let path = RTSPMounts.normalized(protectedPath)
        return named == path || named.hasPrefix(path == "/" ? "/" : path + "/")
    }

    /// The 401 for `request`, its challenges with a new nonce (`stale=TRUE` when `stale`).
    func refuse(_ request: RTSPRequest, at now: ContinuousClock.Instant, _ reason: String, stale: Bool = false) -> Verdict {
        let realm = "realm=" + RTSPAuthenticationChallenge.quoted(authentication.realm)
        let challenges: [String]
        switch authentication.method {
        case .basic:
            challenges = ["Basic " + realm]
        case .digest:
            let nonce = nonces.make(at: now)
            // SHA-256 first, the preferred (RFC 7616 clause 3.7); FFmpeg takes the last Digest
            // challenge, and both name the same nonce, so a client that mixes them still works.
            challenges = [RTSPDigest.Algorithm.sha256, .md5].map { algorithm in
                "Digest " + [realm, "nonce=" + RTSPAuthenticationChallenge.quoted(nonce), "algorithm=" + algorithm.name,
                             #"qop="auth""#, "opaque=" + RTSPAuthenticationChallenge.quoted(nonces.opaque)]
                    .joined(separator: ", ") + (stale ? ", stale=TRUE" : "")
            }
        }
        let response = RTSPResponse(status: .unauthorized, cSeq: request.cSeq, headers: challenges.map { ("WWW-Authenticate", $0) })
        return .refused(response, reason: reason)
    }

    /// The reason for a wrong answer: an unknown user, or a known one's wrong password.
    private static func wrong(_ user: String, known: Bool) -> String {
        // The name as the peer sent it, cut short and without control characters.
        let shown = String(String.UnicodeScalarView(user.unicodeScalars.prefix(64).filter { $0.value >= 0x20 && $0.value != 0x7F }))
        return known ? "wrong password for user \"\(shown)\"" : "unknown user \"\(shown)\""
    }
}
