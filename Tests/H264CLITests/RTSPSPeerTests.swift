import Foundation
import H264
import H264TestSupport
import Testing

/// RTSPS (`--tls-certificate`/`--tls-key`, the self-signed Fixtures/tls/rtsps-test.pem) against
/// real peers on 127.0.0.1, with Digest authentication: FFmpeg (credentials in the URL; it
/// verifies no certificate by default) and GStreamer's `rtspsrc` (`tls-validation-flags=0`)
/// play `h264 serve`, and get 401 without credentials; FFmpeg's `-f rtsp` and `rtspclientsink`
/// publish to `h264 receive --listen rtsps://…` (`rtspclientsink` over TLS only with
/// `protocols=tcp`: with its default protocols it fails "No supported profiles configured"); `h264 receive rtsps://` plays gst-rtsp-server's
/// RTSPS when told to trust its certificate, and refuses it otherwise. Both FFmpeg and GStreamer
/// carry RTP interleaved in the TLS connection, as our server insists.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct RTSPSPeerTests {
    static func tls() throws -> [String] {
        ["--tls-certificate", try TestFixtures.path("tls/rtsps-test.pem"), "--tls-key", try TestFixtures.path("tls/rtsps-test.key")]
    }

    /// `url` with `userInfo@` after its scheme.
    static func adding(_ userInfo: String, to url: String) -> String {
        url.replacingOccurrences(of: "rtsps://", with: "rtsps://\(userInfo)@")
    }

    @Test func ffmpegAndGStreamerPlayWithCredentialsAndGet401Without() throws {
        let server = try RTSPPeerTests.Server(["--auth", "u:p"] + Self.tls())
        #expect(server.url.hasPrefix("rtsps://"))
        let played = try RTSPAuthenticationPeerTests.ffmpeg(Self.adding("u:p", to: server.url), transport: "tcp")
        #expect(played.status == 0 && RTSPAuthenticationPeerTests.frames(played) == 30, "\(played.stderr)")
        let refused = try RTSPAuthenticationPeerTests.ffmpeg(server.url, transport: "tcp")
        #expect(refused.status != 0 && refused.stderr.contains("401 Unauthorized"), "\(refused.stderr)")
        func gst(_ credentials: [String]) throws -> Subprocess.Output {
            try Subprocess.run("timeout", GStreamerShutdownRace.decodingPipeline(server.url, ["tls-validation-flags=0"] + credentials, frames: 30))
        }
        let gstPlayed = try gst(["user-id=u", "user-pw=p"])
        let gstRefused = try gst([])
        #expect(gstRefused.status != 0 && gstRefused.stderr.contains("Unauthorized (401)"), "\(gstRefused.stderr)")
        #expect(GStreamerShutdownRace.decodedPictures(gstRefused.stdout) == 0)
        #expect(server.stop() == 0)
        let events = server.waitForEventsEnd()
        GStreamerShutdownRace.expectPlayed(gstPlayed, frames: 30, serverEvents: events)
        let transports = events.filter { $0["event"] == "session-set-up" }.compactMap { $0["transport"] }
        #expect(transports.count == 2 && transports.allSatisfy { $0.hasPrefix("RTP/AVP/TCP") }, "\(events)")
        #expect(events.filter { $0["event"] == "session-playing" }.count == 2, "\(events)")
    }

    @Test func ffmpegPublishesWithCredentials() throws {
        try RTSPRecordTests.expectRecordsFixture(endings: ["teardown"], listenerArguments: ["--auth", "u:p"] + Self.tls()) { url in
            #expect(url.hasPrefix("rtsps://"))
            return try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "h264", "-i",
                                                  TestFixtures.path(RTPPeerTests.fixture), "-c", "copy", "-f", "rtsp",
                                                  Self.adding("u:p", to: url)])
        }
    }

    @Test func gstreamerPublishesWithCredentials() throws {
        try RTSPRecordTests.expectRecordsFixture(endings: RTSPRecordTests.rtspClientSinkEndings, addedBySender: [9], idleTimeout: 10,
                                                 listenerArguments: ["--auth", "u:p"] + Self.tls(), publisherStatusChecked: false) { url in
            try RTSPRecordTests.rtspClientSink(url, ["user-id=u", "user-pw=p", "tls-validation-flags=0", "protocols=tcp"])
        }
    }

    /// gst-rtsp-server with the same certificate and Digest: trusted by file or fingerprint,
    /// the recording decodes; with the system's roots, one error line.
    @Test func receivesFromGStreamerWhenTheCertificateIsTrusted() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try GStreamerRTSPServer(["--auth", "digest", "--user", "u", "--password", "p"] + Self.tls())
        defer { server.kill() }
        #expect(server.url.hasPrefix("rtsps://"))
        for trust in [try TestFixtures.path("tls/rtsps-test.pem"), "sha256:" + RTSPSFingerprint.value] {
            let output = directory.appendingPathComponent("out.h264").path
            let received = try CLI.run(["receive", Self.adding("u:p", to: server.url), "-o", output, "--frames", "60",
                                        "--idle-timeout", "10", "--tls-trust", trust])
            #expect(received.status == 0 && received.stderr.contains("wrote 60 access units"), "\(received.stderr)")
            let probe = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "framecrc", "-"])
            #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        }
        let refused = try CLI.run(["receive", Self.adding("u:p", to: server.url), "-o", directory.appendingPathComponent("no.h264").path,
                                   "--idle-timeout", "5"])
        #expect(refused.status == 1)
        #expect(refused.stderr == "h264 receive: error: \(server.url): the TLS handshake failed: the server's certificate is not trusted "
                + "(CERTIFICATE_VERIFY_FAILED)\n", "\(refused.stderr)")
    }
}

extension RTSPSPeerTests {
    /// A camera over RTSPS (`h264 serve --rtsp` with the certificate), relayed by `h264 relay
    /// rtsps://… --tls-trust FILE` to plain RTSP, and by a second relay back to RTSPS: FFmpeg
    /// decodes the end of the chain.
    @Test func relaysFromAndToRTSPS() throws {
        let camera = try RTSPPeerTests.Server(Self.tls())
        defer { camera.running.kill() }
        let (plain, plainURL) = try RelayPeerTests.relay(camera.url, ["--tls-trust", TestFixtures.path("tls/rtsps-test.pem")])
        defer { plain.kill() }
        let secure = try LoggingProcess(executable: CLI.executable, ["relay", plainURL, "--rtsp", "127.0.0.1:0"] + Self.tls(),
                                        untilListening: "rtsps")
        defer { secure.kill() }
        let port = try #require(secure.listeningPort(scheme: "rtsps"), "\(secure.stderr)")
        let decoded = try RTSPAuthenticationPeerTests.ffmpeg("rtsps://127.0.0.1:\(port)/live", transport: "tcp")
        #expect(decoded.status == 0 && decoded.stderr.isEmpty && RTSPAuthenticationPeerTests.frames(decoded) == 30, "\(decoded.stderr)")
        #expect(secure.stop() == 0)
        #expect(plain.stop() == 0)
        #expect(camera.stop() == 0)
    }
}

/// The SHA-256 fingerprint of Fixtures/tls/rtsps-test.pem (Fixtures/PROVENANCE).
enum RTSPSFingerprint {
    static let value = "E8:95:C9:70:FB:7A:3E:21:25:74:FB:F8:77:C7:AB:37:C6:A9:DA:86:56:DC:BB:89:5F:9C:C6:1E:CF:DE:36:9F"
}
