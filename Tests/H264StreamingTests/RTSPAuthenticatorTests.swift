import H264
@testable import H264Streaming
import H264TestSupport
import Testing
import RTSPMessages

/// Digest computed as the RFCs' worked examples say (values recomputed with Python's hashlib),
/// the `Authorization` built from a challenge, the strongest scheme chosen, and when a 401 is
/// retried (no credentials sent yet, or a stale nonce once) or final.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPAuthenticatorTests {
    typealias Authenticator = RTSPAuthenticator

    /// RFC 2617 clause 3.5 (MD5, qop=auth).
    @Test func rfc2617Example() {
        #expect(RTSPDigest.response(.md5, user: "Mufasa", realm: "testrealm@host.com", password: "Circle Of Life",
                                             nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", nc: "00000001", cnonce: "0a4f113b",
                                             qop: "auth", method: "GET", uri: "/dir/index.html") == "6629fae49393a05397450978507c4ef1")
    }

    /// RFC 7616 clause 3.9.1, MD5 and SHA-256.
    @Test(arguments: [(RTSPAuthenticator.DigestAlgorithm.md5, "8ca523f5e9506fed4657c9700eebdbec"),
                      (.sha256, "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")])
    func rfc7616Example(algorithm: RTSPAuthenticator.DigestAlgorithm, response: String) {
        #expect(RTSPDigest.response(algorithm, user: "Mufasa", realm: "http-auth@example.org", password: "Circle of Life",
                                             nonce: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc: "00000001",
                                             cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop: "auth",
                                             method: "GET", uri: "/dir/index.html") == response)
    }

    /// RFC 2069 clause 2.4 (no qop: what gst-rtsp-server and many cameras ask for).
    @Test func rfc2069Example() {
        #expect(RTSPDigest.response(.md5, user: "Mufasa", realm: "testrealm@host.com", password: "CircleOfLife",
                                             nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", nc: "", cnonce: "", qop: nil,
                                             method: "GET", uri: "/dir/index.html") == "1949323746fe6a43ef61f9606e7febea")
    }

    /// The RFC 7616 challenge answered twice: nc goes up, a new cnonce each time, opaque echoed.
    @Test func digestAuthorizationCountsAndEchoes() {
        var cnonces = ["f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", "second"].makeIterator()
        var authenticator = Authenticator(credentials: RTSPCredentials(user: "Mufasa", password: "Circle of Life")) { cnonces.next()! }
        #expect(authenticator.authorization(method: "GET", uri: "/dir/index.html") == nil, "no challenge yet")
        let challenge = RTSPAuthenticationChallenge.parse(#"Digest realm="http-auth@example.org", qop="auth, auth-int", "#
            + #"algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
            + #", Digest realm="http-auth@example.org", qop="auth", algorithm=MD5, nonce="x""#)
        #expect(authenticator.unauthorized(by: challenge, sentAuthorization: false, retriedStale: false) == .retry)
        let first = authenticator.authorization(method: "GET", uri: "/dir/index.html")
        #expect(first == #"Digest username="Mufasa", realm="http-auth@example.org", nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "#
            + #"uri="/dir/index.html", response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", algorithm=SHA-256, "#
            + #"cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", nc=00000001, qop=auth, opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#)
        let second = authenticator.authorization(method: "GET", uri: "/dir/index.html") ?? ""
        #expect(second.contains("nc=00000002") && second.contains(#"cnonce="second""#), "\(second)")
    }

    @Test func theStrongestSchemeIsChosen() {
        func chosen(_ headers: [String]) -> String? {
            switch Authenticator.strongest(in: headers.flatMap(RTSPAuthenticationChallenge.parse)) {
            case .basic: "basic"
            case .digest(let digest): digest.algorithm == .sha256 ? "sha256" : "md5"
            case nil: nil
            }
        }
        #expect(chosen([#"Basic realm="r""#, #"Digest realm="r", nonce="1""#, #"Digest realm="r", nonce="2", algorithm=SHA-256"#]) == "sha256")
        #expect(chosen([#"Basic realm="r""#, #"Digest realm="r", nonce="1", algorithm="md5""#]) == "md5")
        #expect(chosen([#"Basic realm="r""#, #"Digest realm="r", nonce="1", algorithm=SHA-512-256"#]) == "basic")
        #expect(chosen([#"Digest realm="r", nonce="1", qop="auth-int""#, "Negotiate"]) == nil)
        #expect(chosen([#"Digest realm="r""#]) == nil, "no nonce")
    }

    /// A 401 to credentials is final unless the nonce is stale, which is retried once.
    @Test func staleIsRetriedOnceAndAWrongPasswordIsFinal() {
        var authenticator = Authenticator(credentials: RTSPCredentials(user: "u", password: "p")) { "c" }
        let fresh = RTSPAuthenticationChallenge.parse(#"Digest realm="r", nonce="1""#)
        let stale = RTSPAuthenticationChallenge.parse(#"Digest realm="r", nonce="2", stale=TRUE"#)
        #expect(authenticator.unauthorized(by: fresh, sentAuthorization: false, retriedStale: false) == .retry)
        #expect(authenticator.authorization(method: "OPTIONS", uri: "*")?.contains(#"nonce="1""#) == true)
        #expect(authenticator.unauthorized(by: stale, sentAuthorization: true, retriedStale: false) == .retry)
        #expect(authenticator.authorization(method: "OPTIONS", uri: "*")?.contains(#"nonce="2""#) == true)
        #expect(authenticator.unauthorized(by: stale, sentAuthorization: true, retriedStale: true)
                == .fail("401 Unauthorized: wrong user or password"))
        #expect(authenticator.unauthorized(by: fresh, sentAuthorization: true, retriedStale: false)
                == .fail("401 Unauthorized: wrong user or password"))
        var anonymous = Authenticator(credentials: nil)
        #expect(anonymous.unauthorized(by: fresh, sentAuthorization: false, retriedStale: false)
                == .fail("401 Unauthorized: the server asks for a user and password, and none was given"))
        var unsupported = Authenticator(credentials: RTSPCredentials(user: "u", password: "p"))
        #expect(unsupported.unauthorized(by: RTSPAuthenticationChallenge.parse("NTLM, Negotiate"), sentAuthorization: false, retriedStale: false)
                == .fail("401 Unauthorized: no supported authentication scheme (the server offers negotiate, ntlm)"))
    }

    @Test func basicAuthorization() {
        var authenticator = Authenticator(credentials: RTSPCredentials(user: "Aladdin", password: "open sesame"))
        _ = authenticator.unauthorized(by: RTSPAuthenticationChallenge.parse(#"Basic realm="WallyWorld""#), sentAuthorization: false,
                                       retriedStale: false)
        #expect(authenticator.authorization(method: "DESCRIBE", uri: "rtsp://h/p") == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    }

    /// The URL's user info, percent-decoded, and the URL without it.
    @Test func userInfoIsTakenOutOfTheURL() {
        let url = "rtsp://ad%40min:p%3Ass:w@cam.local:554/stream?x=a@b"
        #expect(RTSPCredentials(userInfoOf: url) == RTSPCredentials(user: "ad@min", password: "p:ss:w"))
        #expect(RTSPURI.removingUserInfo(url) == "rtsp://cam.local:554/stream?x=a@b")
        #expect(RTSPCredentials(userInfoOf: "rtsp://cam/stream") == nil)
        #expect(RTSPURI.removingUserInfo("rtsp://cam/a@b") == "rtsp://cam/a@b")
        #expect(RTSPCredentials(userInfoOf: "rtsp://admin@cam/") == RTSPCredentials(user: "admin", password: ""))
        #expect(!"\(RTSPCredentials(user: "u", password: "hunter2"))".contains("hunter2"))
    }
}
