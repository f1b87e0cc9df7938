import MediaCore
import H264TestSupport
import Testing
import RTSPMessages

/// `WWW-Authenticate` as cameras and servers write it: quoted and unquoted values, commas and
/// escaped quotes inside quotes, several challenges in one value, any case, missing commas; and
/// never a trap on junk.
@Suite(.ownThread) struct RTSPAuthenticationChallengeTests {
    typealias Challenge = RTSPAuthenticationChallenge

    @Test func digestWithQuotedAndUnquotedValues() {
        let challenges = Challenge.parse(#"Digest realm="IP Camera(23562)", nonce="a8f5, =b", qop=auth, algorithm=SHA-256, stale=FALSE"#)
        #expect(challenges.count == 1)
        #expect(challenges.first?.scheme == "digest")
        #expect(challenges.first?.parameter("realm") == "IP Camera(23562)")
        #expect(challenges.first?.parameter("NONCE") == "a8f5, =b", "a comma and = inside quotes")
        #expect(challenges.first?.parameter("qop") == "auth")
        #expect(challenges.first?.parameter("algorithm") == "SHA-256")
        #expect(challenges.first?.parameter("opaque") == nil)
    }

    @Test func severalChallengesInOneValue() {
        let challenges = Challenge.parse(#"DIGEST Realm="r", Nonce="n1", Algorithm=MD5,Basic realm="r b", Negotiate, Bearer"#)
        #expect(challenges.map(\.scheme) == ["digest", "basic", "negotiate", "bearer"])
        #expect(challenges[0].parameters == [.init(name: "realm", value: "r"), .init(name: "nonce", value: "n1"),
                                             .init(name: "algorithm", value: "MD5")])
        #expect(challenges[1].parameter("realm") == "r b")
    }

    @Test func escapesMissingCommasAndUnterminatedQuotes() {
        #expect(Challenge.parse(#"Digest realm="say \"hi\" \\ there""#).first?.parameter("realm") == #"say "hi" \ there"#)
        let noCommas = Challenge.parse(#"Digest realm="r" nonce="n"  opaque=o"#)
        #expect(noCommas.count == 1 && noCommas[0].parameter("nonce") == "n" && noCommas[0].parameter("opaque") == "o")
        #expect(Challenge.parse(#"Basic realm="open"#).first?.parameter("realm") == "open")
        #expect(Challenge.parse("Digest nonce=abc==, realm = spaced").first?.parameters
                == [.init(name: "nonce", value: "abc=="), .init(name: "realm", value: "spaced")])
    }

    @Test(arguments: ["", ",,, ", "=", "\"", "realm=\"x\"", "= = =\"\\", "Basic realm=", "\u{0}\u{FF}=\"", "Digest ,,= nonce"])
    func junkNeverTraps(text: String) {
        let challenges = Challenge.parse(text)
        #expect(challenges.allSatisfy { !$0.scheme.isEmpty })
    }

    @Test func quotingEscapesAndDropsLineBreaks() {
        #expect(Challenge.quoted(#"a"b\c"#) == #""a\"b\\c""#)
        #expect(Challenge.quoted("x\r\nInjected: 1") == #""xInjected: 1""#)
        #expect(Challenge.parse("Digest u=" + Challenge.quoted(#"a"b\c"#)).first?.parameter("u") == #"a"b\c"#)
    }
}
