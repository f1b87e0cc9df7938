import Foundation
import H264
import H264TestSupport
import Testing
import RTSPMessages

/// `--auth` against real peers on 127.0.0.1: FFmpeg (TCP and UDP, credentials in the URL) and
/// GStreamer's `rtspsrc` (`user-id`/`user-pw`) play `h264 serve --rtsp … --auth u:p` with
/// Digest and Basic, and fail with 401 without credentials or with a wrong password; FFmpeg's
/// `-f rtsp` and `rtspclientsink` publish to `h264 receive --listen … --auth u:p`; wrong
/// passwords in a loop, on one connection and on 50, leave the server serving a good viewer.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct RTSPAuthenticationPeerTests {
    /// `rtsp://USERINFO@127.0.0.1:PORT/live`.
    static func url(_ server: RTSPPeerTests.Server, userInfo: String?) -> String {
        userInfo.map { "rtsp://\($0)@127.0.0.1:\(server.port)/live" } ?? server.url
    }

    /// `ffmpeg -rtsp_transport TRANSPORT -i URL -frames:v 30 -f framecrc -`.
    static func ffmpeg(_ url: String, transport: String) throws -> Subprocess.Output {
        try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport, "-i", url,
                                       "-frames:v", "30", "-f", "framecrc", "-"])
    }

    /// The decoded frames of FFmpeg's framecrc output.
    static func frames(_ output: Subprocess.Output) -> Int {
        String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count
    }

    @Test(arguments: [("tcp", "digest"), ("udp", "digest"), ("tcp", "basic"), ("udp", "basic")])
    func ffmpegPlaysWithCredentialsAndGets401Without(transport: String, method: String) throws {
        let server = try RTSPPeerTests.Server(["--auth", "u:p", "--auth", "other:x", "--auth-method", method])
        let played = try Self.ffmpeg(Self.url(server, userInfo: "u:p"), transport: transport)
        #expect(played.status == 0 && Self.frames(played) == 30, "\(played.stderr)")
        for userInfo in [nil, "u:wrong", "nobody:p"] {
            let refused = try Self.ffmpeg(Self.url(server, userInfo: userInfo), transport: transport)
            #expect(refused.status != 0 && refused.stderr.contains("401 Unauthorized"), "\(userInfo ?? "none"): \(refused.stderr)")
            #expect(Self.frames(refused) == 0)
        }
        let (status, log) = server.stopAndReadLog()
        #expect(status == 0)
        #expect(!log.contains("wrong\""), "no password in the log: \(log)")
        #expect(log.contains("401 for DESCRIBE (wrong password for user \"u\")") || method == "basic" && log.contains("401 for DESCRIBE"), "\(log)")
    }

    @Test func gstreamerPlaysWithCredentialsAndGets401Without() throws {
        let server = try RTSPPeerTests.Server(["--auth", "u:p"])
        func gst(_ credentials: [String]) throws -> Subprocess.Output {
            try Subprocess.run("timeout", GStreamerShutdownRace.decodingPipeline(server.url, credentials + ["protocols=tcp"], frames: 30))
        }
        let played = try gst(["user-id=u", "user-pw=p"])
        for credentials in [[], ["user-id=u", "user-pw=wrong"]] {
            let refused = try gst(credentials)
            #expect(refused.status != 0 && refused.stderr.contains("Unauthorized (401)"), "\(credentials): \(refused.stderr)")
            #expect(GStreamerShutdownRace.decodedPictures(refused.stdout) == 0)
        }
        let (status, log) = server.stopAndReadLog()
        #expect(status == 0)
        let events = server.waitForEventsEnd()
        #expect(events.contains { $0["event"] == "session-playing" }, "\(log)")
        GStreamerShutdownRace.expectPlayed(played, frames: 30, serverEvents: events)
    }

    @Test(arguments: ["digest", "basic"]) func ffmpegPublishesWithCredentials(method: String) throws {
        try RTSPRecordTests.expectRecordsFixture(endings: ["teardown"], listenerArguments: ["--auth", "u:p", "--auth-method", method]) { url in
            let refused = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "h264", "-i",
                                                         TestFixtures.path(RTPPeerTests.fixture), "-c", "copy", "-f", "rtsp",
                                                         url.replacingOccurrences(of: "rtsp://", with: "rtsp://u:wrong@")])
            #expect(refused.status != 0 && refused.stderr.contains("401 Unauthorized"), "\(refused.stderr)")
            return try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "h264", "-i",
                                                  TestFixtures.path(RTPPeerTests.fixture), "-c", "copy", "-f", "rtsp", "-rtsp_transport", "tcp",
                                                  url.replacingOccurrences(of: "rtsp://", with: "rtsp://u:p@")])
        }
    }

    @Test func gstreamerPublishesWithCredentials() throws {
        try RTSPRecordTests.expectRecordsFixture(endings: RTSPRecordTests.rtspClientSinkEndings, addedBySender: [9], idleTimeout: 10,
                                                 listenerArguments: ["--auth", "u:p"], publisherStatusChecked: false) { url in
            try RTSPRecordTests.rtspClientSink(url, ["user-id=u", "user-pw=p", "protocols=tcp"])
        }
    }

    /// 200 wrong Digest answers (with the server's own nonce) on one connection, then 200 on
    /// each of 50 connections at once: each gets 401, the server's memory does not grow with
    /// them (nonces have no table), and a good viewer then plays.
    @Test func wrongPasswordsInALoopLeaveTheServerServing() throws {
        let server = try RTSPPeerTests.Server(["--auth", "u:p", "--quiet"])
        let first = try RTSPPeerTests.Connection(port: server.port)
        let challenge = try #require(first.request("DESCRIBE \(server.url) RTSP/1.0\r\nCSeq: 1\r\n\r\n"))
        #expect(challenge.status == 401)
        let nonce = try #require(challenge.headers["www-authenticate"].flatMap { RTSPAuthenticationChallenge.parse($0).first?.parameter("nonce") })
        let wrong = #"Digest username="u", realm="swift-h264", nonce="\#(nonce)", uri="\#(server.url)", "#
            + #"response="00000000000000000000000000000000""#
        let (url, port) = (server.url, server.port)
        #expect(Self.hammer(first, url: url, authorization: wrong) == 200)
        let before = ProcessResources.residentKiB(server.process.processIdentifier)
        let counts = Locked([Int]())
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            let count = (try? RTSPPeerTests.Connection(port: port)).map { Self.hammer($0, url: url, authorization: wrong) } ?? 0
            counts.withLock { $0.append(count) }
        }
        #expect(counts.withLock { $0 } == Array(repeating: 200, count: 50))
        let after = ProcessResources.residentKiB(server.process.processIdentifier)
        // Under a sanitizer memory stays resident (ASan's quarantine, TSan's shadow): the plain runs check it.
        if !ProcessResources.underSanitizer {
            #expect(after - before < 32 * 1024, "resident memory grew from \(before) KiB to \(after) KiB")
        }
        let played = try Self.ffmpeg(Self.url(server, userInfo: "u:p"), transport: "tcp")
        #expect(played.status == 0 && Self.frames(played) == 30, "\(played.stderr)")
        #expect(server.stop() == 0)
    }

    /// 200 DESCRIBEs of `url` with `authorization`, sent at once; how many got 401.
    static func hammer(_ connection: RTSPPeerTests.Connection, url: String, authorization: String) -> Int {
        connection.send((1...200).map { "DESCRIBE \(url) RTSP/1.0\r\nCSeq: \($0)\r\nAuthorization: \(authorization)\r\n\r\n" }.joined())
        return (1...200).filter { _ in connection.response()?.status == 401 }.count
    }
}
