import MediaCore
import H264TestSupport
import Testing
import RTSPMessages

/// `RTSPAuthorization.parse` on what clients send: FFmpeg's Digest (quoted `algorithm`, `nc`
/// and `qop` unquoted), GStreamer's (no `qop`), Basic's token; its text parses back to itself;
/// what is not an `Authorization` is nil or has no credentials, never a trap.
@Suite(.ownThread) struct RTSPAuthorizationTests {
    @Test func ffmpegsDigest() throws {
        let value = #"Digest username="u", realm="swift-h264", nonce="00ab", uri="rtsp://127.0.0.1:8554/live", "#
            + #"response="0123abcd", algorithm="MD5", cnonce="6b8b4567", nc=00000001, qop="auth", opaque="x,y""#
        let authorization = try #require(RTSPAuthorization.parse(value))
        #expect(authorization.scheme == "digest" && authorization.token == nil)
        #expect(authorization.parameter("URI") == "rtsp://127.0.0.1:8554/live" && authorization.parameter("algorithm") == "MD5")
        #expect(authorization.parameter("nc") == "00000001" && authorization.parameter("opaque") == "x,y")
        #expect(RTSPAuthorization.parse(authorization.text) == authorization)
    }

    @Test func basic() throws {
        let authorization = try #require(RTSPAuthorization.parse("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="))
        #expect(authorization.scheme == "basic" && authorization.token == "QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(authorization.basicCredentials?.user == "Aladdin" && authorization.basicCredentials?.password == "open sesame")
        #expect(RTSPAuthorization.parse(authorization.text) == authorization)
        // A password with colons keeps them: only the first splits.
        let colons = try #require(RTSPAuthorization.parse("Basic " + Base64.encode(Array("a:b:c".utf8))))
        #expect(colons.basicCredentials?.user == "a" && colons.basicCredentials?.password == "b:c")
        #expect(RTSPAuthorization.parse("Basic !!")?.basicCredentials == nil)
        #expect(RTSPAuthorization.parse("Digest QWxh")?.basicCredentials == nil)
    }

    @Test(arguments: ["", "   ", "=abc", "a=b", ",", "\"x\""])
    func notAnAuthorization(value: String) {
        #expect(RTSPAuthorization.parse(value) == nil)
    }

    /// The last is the fuzz target's find: a parameter name that begins with a combining mark
    /// (U+0363), which joins the space before it into one character.
    @Test(arguments: ["Digest", "Digest ,,,", "Digest stray username=\"u\" realm=r", #"Digest a="unterminated"#, "Negotiate abc==",
                      "Basic c2FtSt\"u\",\u{DC}\", cnRangeon=bec\"\u{363}\u{0}N=="])
    func tolerated(value: String) throws {
        let authorization = try #require(RTSPAuthorization.parse(value))
        #expect(RTSPAuthorization.parse(authorization.text) == authorization)
    }
}
