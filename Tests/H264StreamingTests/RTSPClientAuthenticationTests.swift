import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing
import RTSPMessages

/// The client's connection handler answers a 401 as a camera expects: once more with the
/// strongest scheme, later requests authorized at once (nc counting up), a stale nonce retried
/// once, wrong credentials a final `unauthorized` error after exactly two requests.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPClientAuthenticationTests {
    static let credentials = RTSPCredentials(user: "admin", password: "secret")

    @Test func a401IsRetriedWithDigestAndLaterRequestsCarryIt() throws {
        let client = try EmbeddedRTSPClient(credentials: Self.credentials)
        let describe = client.request("DESCRIBE", "rtsp://cam/stream")
        let first = try client.sent()
        #expect(first.count == 1 && first[0].header("Authorization") == nil)
        try client.answer(first[0], .unauthorized, headers: [("WWW-Authenticate", #"Basic realm="cam""#),
                                                             ("WWW-Authenticate", #"Digest realm="cam", nonce="n1", qop="auth", opaque="op""#)])
        let retried = try client.sent()
        #expect(retried.count == 1 && retried[0].cSeq != first[0].cSeq)
        let authorization = try #require(retried[0].header("Authorization"))
        try Self.expectValidDigest(authorization, method: "DESCRIBE", uri: "rtsp://cam/stream", nc: "00000001")
        #expect(authorization.contains(#"opaque="op""#))
        try client.answer(retried[0], .ok)
        #expect(try describe.wait().status == .ok)

        let setup = client.request("SETUP", "rtsp://cam/stream/track1")
        let next = try client.sent()
        #expect(next.count == 1, "authorized at once, no 401 round trip")
        try Self.expectValidDigest(try #require(next[0].header("Authorization")), method: "SETUP", uri: "rtsp://cam/stream/track1",
                                   nc: "00000002")
        try client.answer(next[0], .ok)
        #expect(try setup.wait().status == .ok)
    }

    /// `stale=true`: the same credentials with the new nonce, once.
    @Test func aStaleNonceIsRetriedOnce() throws {
        let client = try EmbeddedRTSPClient(credentials: Self.credentials)
        let play = client.request("PLAY", "rtsp://cam/stream")
        try client.answer(try client.sent()[0], .unauthorized, headers: [("WWW-Authenticate", #"Digest realm="cam", nonce="n1""#)])
        let withN1 = try client.sent()[0]
        #expect(withN1.header("Authorization")?.contains(#"nonce="n1""#) == true)
        try client.answer(withN1, .unauthorized, headers: [("WWW-Authenticate", #"Digest realm="cam", nonce="n2", stale=true"#)])
        let withN2 = try client.sent()
        #expect(withN2.count == 1 && withN2[0].header("Authorization")?.contains(#"nonce="n2""#) == true)
        try client.answer(withN2[0], .unauthorized, headers: [("WWW-Authenticate", #"Digest realm="cam", nonce="n3", stale=true"#)])
        #expect(try client.sent().isEmpty, "one stale retry, not more")
        #expect(throws: RTSPClientError.self) { try play.wait() }
    }

    @Test func aWrongPasswordIsOneRetryThenAnUnauthorizedError() throws {
        let client = try EmbeddedRTSPClient(credentials: RTSPCredentials(user: "admin", password: "wrong"))
        let describe = client.request("DESCRIBE", "rtsp://cam/stream")
        let challenge = [("WWW-Authenticate", #"Digest realm="cam", nonce="n1", algorithm=SHA-256, qop=auth"#)]
        try client.answer(try client.sent()[0], .unauthorized, headers: challenge)
        let retried = try client.sent()
        #expect(retried.count == 1 && retried[0].header("Authorization")?.contains("algorithm=SHA-256") == true)
        try client.answer(retried[0], .unauthorized, headers: challenge)
        #expect(try client.sent().isEmpty)
        #expect { try describe.wait() } throws: { error in
            let error = error as? RTSPClientError
            return error?.code == .unauthorized && error?.status?.code == 401
                && error?.description == "DESCRIBE rtsp://cam/stream: 401 Unauthorized: wrong user or password"
        }
    }

    @Test func withoutCredentialsA401IsFinal() throws {
        let client = try EmbeddedRTSPClient()
        let describe = client.request("DESCRIBE", "rtsp://cam/stream")
        try client.answer(try client.sent()[0], .unauthorized, headers: [("WWW-Authenticate", #"Basic realm="cam""#)])
        #expect(try client.sent().isEmpty)
        #expect { try describe.wait() } throws: { ($0 as? RTSPClientError)?.code == .unauthorized && "\($0)".contains("401") }
    }

    /// Checks the digest fields against a response computed from them (RFC 7616 clause 3.4.1).
    static func expectValidDigest(_ authorization: String, method: String, uri: String, nc: String,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        let challenge = try #require(RTSPAuthenticationChallenge.parse(authorization).first, sourceLocation: sourceLocation)
        #expect(challenge.scheme == "digest" && challenge.parameter("username") == credentials.user, sourceLocation: sourceLocation)
        #expect(challenge.parameter("uri") == uri && challenge.parameter("nc") == nc, sourceLocation: sourceLocation)
        let expected = RTSPAuthenticator.digestResponse(.md5, user: credentials.user, realm: challenge.parameter("realm") ?? "",
                                                        password: credentials.password, nonce: challenge.parameter("nonce") ?? "",
                                                        nc: nc, cnonce: challenge.parameter("cnonce") ?? "", qop: "auth",
                                                        method: method, uri: uri)
        #expect(challenge.parameter("response") == expected, sourceLocation: sourceLocation)
    }
}
