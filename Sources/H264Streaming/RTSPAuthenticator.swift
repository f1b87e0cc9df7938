import H264
import RTSPMessages

/// The client side of RTSP authentication, without I/O: picks the strongest challenge of a
/// `401 Unauthorized` (Digest SHA-256, then Digest MD5, then Basic), builds the `Authorization`
/// of every later request (Digest: RFC 7616 with `qop=auth`, or RFC 2069's form when the server
/// names no `qop`; the nonce count goes up and the cnonce is new each time; `opaque` echoed), and
/// says whether a 401 is worth one more try (credentials not sent yet, or a `stale` nonce) or is
/// final. Never traps, whatever the server sends.
struct RTSPAuthenticator {
    /// A digest algorithm of RFC 7616 clause 3.3 this client computes.
    typealias DigestAlgorithm = RTSPDigest.Algorithm

    /// The parameters of a Digest challenge the client answers.
    struct DigestChallenge: Equatable {
        var realm: String
        var nonce: String
        var opaque: String?
        var algorithm: DigestAlgorithm
        /// The `algorithm` as the server wrote it, echoed; nil when it wrote none (MD5).
        var algorithmName: String?
        /// `-sess`: the first hash also covers the nonce and cnonce.
        var session: Bool
        /// `qop=auth` offered; otherwise the RFC 2069 response.
        var qopAuth: Bool
        var stale: Bool

        /// The challenge's parameters, when it is Digest with an algorithm and a `qop` this
        /// client can answer.
        init?(_ challenge: RTSPAuthenticationChallenge) {
            guard challenge.scheme == "digest", let nonce = challenge.parameter("nonce") else { return nil }
            let name = challenge.parameter("algorithm")
            guard let algorithm = DigestAlgorithm(name: name) else { return nil }
            self.algorithm = algorithm
            session = name?.uppercased().hasSuffix("-SESS") == true
            let qops = challenge.parameter("qop").map { $0.split(separator: ",").map { $0.trimming(" \t").lowercased() } }
            if let qops, !qops.contains("auth") { return nil } // auth-int only: a body hash this client does not do
            qopAuth = qops != nil
            realm = challenge.parameter("realm") ?? ""
            self.nonce = nonce
            opaque = challenge.parameter("opaque")
            algorithmName = name
            stale = challenge.parameter("stale")?.lowercased() == "true"
        }
    }

    /// The scheme the client answers with.
    enum Scheme: Equatable {
        case basic
        case digest(DigestChallenge)
    }

    /// What to do about a 401.
    enum Answer: Equatable {
        /// Send the request again, now with (new) credentials.
        case retry
        /// Give up: the message says why (`401 Unauthorized: wrong user or password`).
        case fail(String)
    }

    /// The user and password; nil: a 401 is final.
    let credentials: RTSPCredentials?
    /// The scheme chosen at the last 401; nil before any.
    private(set) var scheme: Scheme?
    /// The digest nonce count (`nc`) of the last request.
    private(set) var nonceCount: UInt32 = 0
    private let makeCnonce: () -> String

    /// An authenticator with `credentials`; `makeCnonce` gives each digest request its client
    /// nonce (16 random hex digits unless a test fixes it).
    init(credentials: RTSPCredentials?, makeCnonce: @escaping () -> String = RTSPAuthenticator.randomCnonce) {
        self.credentials = credentials
        self.makeCnonce = makeCnonce
    }

    /// The `Authorization` value for `method` on `uri` (the Request-URI, as sent), or nil before
    /// any 401 chose a scheme.
    mutating func authorization(method: String, uri: String) -> String? {
        guard let credentials, let scheme else { return nil }
        switch scheme {
        case .basic:
            return "Basic " + Base64.encode(Array("\(credentials.user):\(credentials.password)".utf8))
        case .digest(let challenge):
            nonceCount &+= 1
            let nc = Self.hex8(nonceCount), cnonce = makeCnonce()
            let response = RTSPDigest.response(challenge.algorithm, session: challenge.session, user: credentials.user,
                                               realm: challenge.realm, password: credentials.password, nonce: challenge.nonce,
                                               nc: nc, cnonce: cnonce, qop: challenge.qopAuth ? "auth" : nil, method: method, uri: uri)
            var fields = ["username=" + RTSPAuthenticationChallenge.quoted(credentials.user),
                          "realm=" + RTSPAuthenticationChallenge.quoted(challenge.realm),
                          "nonce=" + RTSPAuthenticationChallenge.quoted(challenge.nonce),
                          "uri=" + RTSPAuthenticationChallenge.quoted(uri),
                          "response=" + RTSPAuthenticationChallenge.quoted(response)]
            if let name = challenge.algorithmName { fields.append("algorithm=" + name) }
            if challenge.qopAuth || challenge.session { fields.append("cnonce=" + RTSPAuthenticationChallenge.quoted(cnonce)) }
            if challenge.qopAuth { fields += ["nc=" + nc, "qop=auth"] }
            if let opaque = challenge.opaque { fields.append("opaque=" + RTSPAuthenticationChallenge.quoted(opaque)) }
            return "Digest " + fields.joined(separator: ", ")
        }
    }

    /// A 401 came with `challenges` (from all its `WWW-Authenticate` headers).
    /// `sentAuthorization`: the request carried credentials; `retriedStale`: it was already the
    /// one retry of a stale nonce. Retries when the request had no credentials yet, or once when
    /// the server marks the nonce `stale`; otherwise the 401 is final.
    mutating func unauthorized(by challenges: [RTSPAuthenticationChallenge], sentAuthorization: Bool,
                               retriedStale: Bool) -> Answer {
        guard credentials != nil else { return .fail("401 Unauthorized: the server asks for a user and password, and none was given") }
        guard let strongest = Self.strongest(in: challenges) else {
            let offered = Set(challenges.map(\.scheme)).sorted().joined(separator: ", ")
            return .fail("401 Unauthorized: no supported authentication scheme (the server offers \(offered.isEmpty ? "none" : offered))")
        }
        if !sentAuthorization {
            accept(strongest)
            return .retry
        }
        if !retriedStale, case .digest(let challenge) = strongest, challenge.stale {
            accept(strongest)
            return .retry
        }
        return .fail("401 Unauthorized: wrong user or password")
    }

    private mutating func accept(_ chosen: Scheme) {
        if case .digest(let new) = chosen, case .digest(let old) = scheme, new.nonce == old.nonce {
            // The same nonce: the count goes on.
        } else {
            nonceCount = 0
        }
        scheme = chosen
    }

    /// The strongest scheme this client can answer: Digest SHA-256, then Digest MD5, then Basic.
    static func strongest(in challenges: [RTSPAuthenticationChallenge]) -> Scheme? {
        let digests = challenges.compactMap(DigestChallenge.init)
        if let digest = digests.first(where: { $0.algorithm == .sha256 }) ?? digests.first { return .digest(digest) }
        return challenges.contains { $0.scheme == "basic" } ? .basic : nil
    }

    /// The digest `response`: `RTSPDigest.response(_:session:user:realm:password:nonce:nc:cnonce:qop:method:uri:)`,
    /// the one computation the client and the server share.
    static func digestResponse(_ algorithm: DigestAlgorithm, session: Bool = false, user: String, realm: String,
                               password: String, nonce: String, nc: String, cnonce: String, qop: String?,
                               method: String, uri: String) -> String {
        RTSPDigest.response(algorithm, session: session, user: user, realm: realm, password: password, nonce: nonce, nc: nc,
                            cnonce: cnonce, qop: qop, method: method, uri: uri)
    }

    /// 16 random hex digits.
    static func randomCnonce() -> String {
        hex8(UInt32.random(in: .min ... .max)) + hex8(UInt32.random(in: .min ... .max))
    }

    /// `value` as 8 lowercase hex digits (`nc=00000001`).
    static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

extension StringProtocol {
    /// The text without the leading and trailing characters in `set`.
    fileprivate func trimming(_ set: String) -> String {
        let drop = { (c: Character) in set.contains(c) }
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else { return "" }
        return String(self[first...last])
    }
}
