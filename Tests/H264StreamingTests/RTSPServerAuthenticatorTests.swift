import H264
@testable import H264Streaming
import H264TestSupport
import Testing
import RTSPMessages

/// The server's check of `Authorization`, without sockets: the RFCs' worked examples in reverse
/// (the server accepts the RFC's answer for the RFC's nonce), and refusals — a wrong response,
/// an unknown user, an expired nonce (`stale=TRUE` only when the answer is otherwise right), a
/// digest of another URI, Basic right and wrong — then the signed nonces, our client's answers
/// to our challenges, and garbage that never traps.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPServerAuthenticatorTests {
    typealias Authentication = RTSPServer.Authentication
    static let start = ContinuousClock.now

    /// RFC 7616 clause 3.9.1: user Mufasa, password "Circle of Life", GET /dir/index.html.
    static let rfc7616 = RTSPServerAuthenticator(
        authentication: Authentication(users: ["Mufasa": "Circle of Life"], realm: "http-auth@example.org"),
        nonces: RTSPDigestNonces(fixed: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", madeAt: start,
                                 opaque: "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"))

    static func rfc7616Authorization(algorithm: String, response: String, user: String = "Mufasa",
                                      uri: String = "/dir/index.html") -> String {
        #"Digest username="\#(user)", realm="http-auth@example.org", uri="\#(uri)", algorithm=\#(algorithm), "#
            + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, "#
            + #"cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="\#(response)", "#
            + #"opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
    }

    static let md5Response = "8ca523f5e9506fed4657c9700eebdbec"
    static let sha256Response = "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"

    static func request(_ authorization: String?, method: String = "GET", uri: String = "/dir/index.html") -> RTSPRequest {
        RTSPRequest(method: method, uri: uri, headers: [("CSeq", "3")] + (authorization.map { [("Authorization", $0)] } ?? []))
    }

    /// The challenges of a refusal; nil when the request was allowed.
    static func challenges(_ verdict: RTSPServerAuthenticator.Verdict) -> [RTSPAuthenticationChallenge]? {
        guard case .refused(let response, _) = verdict else { return nil }
        #expect(response.status == .unauthorized && response.header("CSeq") == "3")
        return response.headers.filter { $0.name == "WWW-Authenticate" }.flatMap { RTSPAuthenticationChallenge.parse($0.value) }
    }

    @Test(arguments: [("MD5", md5Response), ("SHA-256", sha256Response)])
    func theRFC7616ExampleIsAccepted(algorithm: String, response: String) {
        let verdict = Self.rfc7616.check(Self.request(Self.rfc7616Authorization(algorithm: algorithm, response: response)),
                                         path: "/dir", at: Self.start + .seconds(1))
        #expect(verdict == .allowed(user: "Mufasa"))
    }

    /// RFC 2617 clause 3.5 (MD5 without `algorithm`, `qop=auth`).
    @Test func theRFC2617ExampleIsAccepted() {
        let authenticator = RTSPServerAuthenticator(
            authentication: Authentication(users: ["Mufasa": "Circle Of Life"], realm: "testrealm@host.com"),
            nonces: RTSPDigestNonces(fixed: "dcd98b7102dd2f0e8b11d0f600bfb0c093", madeAt: Self.start, opaque: "5ccc069c403ebaf9f0171e9517f40e41"))
        let authorization = #"Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", "#
            + #"uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1", "#
            + #"opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        #expect(authenticator.check(Self.request(authorization), path: "/dir", at: Self.start) == .allowed(user: "Mufasa"))
        // The same nonce: with another password the answer is wrong.
        let other = RTSPServerAuthenticator(
            authentication: Authentication(users: ["Mufasa": "Circle of Life"], realm: "testrealm@host.com"),
            nonces: RTSPDigestNonces(fixed: "dcd98b7102dd2f0e8b11d0f600bfb0c093", madeAt: Self.start, opaque: ""))
        #expect(Self.challenges(other.check(Self.request(authorization), path: "/dir", at: Self.start)) != nil)
    }

    /// A wrong response, an unknown user (with the response right for their password) and a
    /// request without credentials get 401 with both challenges (SHA-256, then MD5), the realm,
    /// `qop="auth"`, the opaque, one new nonce, and no `stale`.
    @Test(arguments: [
        rfc7616Authorization(algorithm: "MD5", response: "8ca523f5e9506fed4657c9700eebdbed"),
        rfc7616Authorization(algorithm: "MD5", response: md5Response, user: "Simba"),
        rfc7616Authorization(algorithm: "MD5", response: md5Response.uppercased() + "0"),
        nil,
    ])
    func wrongAnswersAreRefused(authorization: String?) throws {
        let challenges = try #require(Self.challenges(Self.rfc7616.check(Self.request(authorization), path: "/dir",
                                                                         at: Self.start + .seconds(1))))
        #expect(challenges.map(\.scheme) == ["digest", "digest"])
        #expect(challenges.map { $0.parameter("algorithm") } == ["SHA-256", "MD5"])
        for challenge in challenges {
            #expect(challenge.parameter("realm") == "http-auth@example.org" && challenge.parameter("qop") == "auth")
            #expect(challenge.parameter("opaque") == "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS")
            #expect(challenge.parameter("nonce") == "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v")
            #expect(challenge.parameter("stale") == nil)
        }
    }

    /// Past the nonce's lifetime the right answer gets `stale=TRUE` (the client retries with the
    /// new nonce); a wrong answer with it stays a plain 401.
    @Test func anExpiredNonceIsStaleOnlyWhenTheAnswerIsRight() throws {
        let late = Self.start + .seconds(61)
        let right = try #require(Self.challenges(Self.rfc7616.check(
            Self.request(Self.rfc7616Authorization(algorithm: "MD5", response: Self.md5Response)), path: "/dir", at: late)))
        #expect(right.allSatisfy { $0.parameter("stale") == "TRUE" })
        let wrong = try #require(Self.challenges(Self.rfc7616.check(
            Self.request(Self.rfc7616Authorization(algorithm: "MD5", response: Self.md5Response, user: "Simba")), path: "/dir", at: late)))
        #expect(wrong.allSatisfy { $0.parameter("stale") == nil })
        #expect(Self.rfc7616.check(Self.request(Self.rfc7616Authorization(algorithm: "MD5", response: Self.md5Response)),
                                   path: "/dir", at: Self.start + .seconds(60)) == .allowed(user: "Mufasa"))
    }

    /// A digest of another URI than the request's is refused, even when right for that URI; the
    /// protected path itself may stand for its tracks (GStreamer names its connection's URL).
    @Test func theDigestURIMustNameTheRequest() {
        let nonce = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
        func authorization(uri: String, method: String) -> String {
            let response = RTSPDigest.response(.md5, user: "Mufasa", realm: "http-auth@example.org", password: "Circle of Life",
                                               nonce: nonce, nc: "00000001", cnonce: cnonce, qop: "auth", method: method, uri: uri)
            return Self.rfc7616Authorization(algorithm: "MD5", response: response, uri: uri)
        }
        let at = Self.start + .seconds(1)
        let other = Self.request(authorization(uri: "rtsp://h/other", method: "SETUP"), method: "SETUP", uri: "rtsp://h/live/track1")
        #expect(Self.challenges(Self.rfc7616.check(other, path: "/live", at: at)) != nil)
        let stolen = Self.request(authorization(uri: "/dir/index.html", method: "GET"), uri: "/secret/index.html")
        #expect(Self.challenges(Self.rfc7616.check(stolen, path: "/secret", at: at)) != nil)
        let connectionURL = Self.request(authorization(uri: "rtsp://h/live", method: "SETUP"), method: "SETUP", uri: "rtsp://h/live/track1")
        #expect(Self.rfc7616.check(connectionURL, path: "/live", at: at) == .allowed(user: "Mufasa"))
        // The method is in the digest too: a DESCRIBE's answer does not do for a SETUP.
        let otherMethod = Self.request(authorization(uri: "rtsp://h/live", method: "DESCRIBE"), method: "SETUP", uri: "rtsp://h/live")
        #expect(Self.challenges(Self.rfc7616.check(otherMethod, path: "/live", at: at)) != nil)
    }

    /// RFC 7617 clause 2's example, right and wrong; Basic credentials to a Digest server and
    /// Digest ones to a Basic server are refused.
    @Test func basic() throws {
        let basic = RTSPServerAuthenticator(authentication: Authentication(users: ["Aladdin": "open sesame"], method: .basic, realm: "WallyWorld"),
                                            nonces: RTSPDigestNonces())
        #expect(basic.check(Self.request("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="), path: "/", at: Self.start) == .allowed(user: "Aladdin"))
        #expect(basic.check(Self.request("basic   QWxhZGRpbjpvcGVuIHNlc2FtZQ"), path: "/", at: Self.start) == .allowed(user: "Aladdin"))
        for wrong in ["Basic " + Base64.encode(Array("Aladdin:open sesamE".utf8)), "Basic " + Base64.encode(Array("aladdin:open sesame".utf8)),
                      "Basic " + Base64.encode(Array("Aladdin".utf8)), "Basic !!!", "Basic", "Digest username=\"Aladdin\"", "Bearer x"] {
            let challenges = try #require(Self.challenges(basic.check(Self.request(wrong), path: "/", at: Self.start)), "\(wrong)")
            #expect(challenges == [RTSPAuthenticationChallenge(scheme: "basic", parameters: [.init(name: "realm", value: "WallyWorld")])])
        }
        #expect(Self.challenges(Self.rfc7616.check(Self.request("Basic " + Base64.encode(Array("Mufasa:Circle of Life".utf8))),
                                                   path: "/dir", at: Self.start)) != nil)
    }

    /// Signed nonces: fresh within the lifetime, expired after it, unknown when changed in any
    /// digit, from another server, or not a nonce at all.
    @Test func signedNonces() {
        let nonces = RTSPDigestNonces(origin: Self.start), other = RTSPDigestNonces(origin: Self.start)
        let made = Self.start + .seconds(5)
        let nonce = nonces.make(at: made)
        #expect(nonce.count == 64 && nonce != nonces.make(at: made), "each nonce has its own random bits")
        #expect(nonces.freshness(of: nonce, at: made + .seconds(60), lifetime: .seconds(60)) == .fresh)
        #expect(nonces.freshness(of: nonce, at: made + .milliseconds(60_001), lifetime: .seconds(60)) == .expired)
        #expect(nonces.freshness(of: nonce, at: Self.start, lifetime: .seconds(60)) == .unknown, "made in the future")
        #expect(other.freshness(of: nonce, at: made, lifetime: .seconds(60)) == .unknown)
        var digits = Array(nonce.utf8)
        for index in digits.indices {
            let kept = digits[index]
            digits[index] = kept == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            #expect(nonces.freshness(of: String(decoding: digits, as: UTF8.self), at: made, lifetime: .seconds(60)) == .unknown)
            digits[index] = kept
        }
        for garbage in ["", "zz", String(nonce.dropLast()), nonce + "00", String(repeating: "a", count: 10_000)] {
            #expect(nonces.freshness(of: garbage, at: made, lifetime: .seconds(60)) == .unknown)
        }
    }

    /// Our client answers our challenges (it takes SHA-256), and so does an RFC 2069 answer
    /// (MD5, no `qop`, as GStreamer sends it); both on requests that follow with the same nonce.
    @Test func answersOfRealClientsAreAccepted() throws {
        let authenticator = RTSPServerAuthenticator(authentication: Authentication(users: ["viewer": "pa:ss \"word\""]), nonces: RTSPDigestNonces())
        let uri = "rtsp://127.0.0.1:8554/live"
        guard case .refused(let first, _) = authenticator.check(Self.request(nil, method: "DESCRIBE", uri: uri), path: "/live", at: .now) else {
            Issue.record("no 401 without credentials")
            return
        }
        #expect(first.status == .unauthorized)
        let challenges = first.headers.filter { $0.name == "WWW-Authenticate" }.flatMap { RTSPAuthenticationChallenge.parse($0.value) }
        var client = RTSPAuthenticator(credentials: RTSPCredentials(user: "viewer", password: "pa:ss \"word\""))
        #expect(client.unauthorized(by: challenges, sentAuthorization: false, retriedStale: false) == .retry)
        for (method, requestURI) in [("DESCRIBE", uri), ("SETUP", uri + "/track1"), ("PLAY", uri)] {
            let answer = client.authorization(method: method, uri: requestURI)
            let authorization = try #require(answer)
            #expect(authorization.contains("algorithm=SHA-256"))
            #expect(authenticator.check(Self.request(authorization, method: method, uri: requestURI), path: "/live", at: .now)
                == .allowed(user: "viewer"))
        }
        let nonce = try #require(challenges.last?.parameter("nonce"))
        let response = RTSPDigest.response(.md5, user: "viewer", realm: "swift-h264", password: "pa:ss \"word\"", nonce: nonce,
                                           nc: "", cnonce: "", qop: nil, method: "SETUP", uri: uri)
        let gstreamer = #"Digest username="viewer", realm="swift-h264", nonce="\#(nonce)", uri="\#(uri)", response="\#(response)""#
        #expect(authenticator.check(Self.request(gstreamer, method: "SETUP", uri: uri + "/track1"), path: "/live", at: .now)
            == .allowed(user: "viewer"))
    }

    /// Garbage in `Authorization` is refused with a 401, never a trap; the reason never holds
    /// the password sent.
    @Test func garbageNeverTraps() {
        let authenticator = Self.rfc7616
        var random = SplitMix64(seed: 21)
        var values = ["", " ", "Digest", "Digest ,,,", "Digest username", #"Digest username=""#, "Digest =", "=", "\"", "Basic =",
                      "Basic ====", "Digest username=Mufasa, nonce=x, uri=/dir/index.html, response=zz, algorithm=SHA-512-256",
                      "Digest username=Mufasa, realm=http-auth@example.org, nonce=7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v, uri=/dir/index.html, response=x, qop=auth-int",
                      String(repeating: "Digest a=b, ", count: 1000), "Digest \u{0}\r\n\u{FF}"]
        for _ in 0..<500 {
            let alphabet = Array(#"Digest Basic username=realm nonce"uri response,\ ="#.utf8) + [0, 0xFF, 0x0D]
            values.append(String(decoding: (0..<Int(random.next() % 80)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] },
                                 as: UTF8.self))
        }
        for value in values {
            let verdict = authenticator.check(Self.request(value + #", password="Circle of Life""#), path: "/dir", at: Self.start)
            guard case .refused(let response, let reason) = verdict else {
                Issue.record("allowed: \(value)")
                continue
            }
            #expect(response.status == .unauthorized && !reason.contains("Circle"))
        }
    }
}
