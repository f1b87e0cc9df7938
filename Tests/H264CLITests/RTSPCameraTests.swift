import Foundation
import H264
import H264TestSupport
import Testing

/// `h264 receive` against gst-rtsp-server (Scripts/gst-rtsp-server.py) set up as cameras are:
/// Basic and Digest authentication, an 8-second session timeout (300 frames at 30 fps take
/// 10 s, so the keepalive must work), RTP over UDP only and over TCP only (`--transport auto`
/// falls back on 461). Each recording of 300 access units decodes with FFmpeg without an error.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct RTSPCameraTests {
    /// The script's options, how `h264 receive` gets the credentials, and its own options.
    struct Camera: CustomTestStringConvertible, Sendable {
        var name: String
        var server: [String]
        var userInfo = ""
        var receive: [String] = []
        var testDescription: String { name }
    }

    static let cameras = [
        Camera(name: "basic auth, credentials in the URL", server: ["--auth", "basic", "--user", "viewer", "--password", "p@ss word"],
               userInfo: "viewer:p%40ss%20word@"),
        Camera(name: "digest auth, --user/--password", server: ["--auth", "digest", "--user", "viewer", "--password", "s3cret"],
               receive: ["--user", "viewer", "--password", "s3cret"]),
        Camera(name: "8-second session timeout", server: ["--session-timeout", "8"]),
        Camera(name: "UDP only, --transport auto", server: ["--protocols", "udp"], receive: ["--transport", "auto"]),
        Camera(name: "TCP only, --transport auto falls back on 461", server: ["--protocols", "tcp"], receive: ["--transport", "auto"]),
    ]

    @Test(arguments: cameras) func receivesThreeHundredFrames(camera: Camera) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let server = try GStreamerRTSPServer(camera.server)
        defer { server.kill() }
        let url = server.url.replacingOccurrences(of: "rtsp://", with: "rtsp://" + camera.userInfo)
        let started = ContinuousClock.now
        let received = try CLI.run(["receive", url, "-o", output, "--frames", "300", "--idle-timeout", "10"] + camera.receive)
        let elapsed = ContinuousClock.now - started
        #expect(received.status == 0, "\(received.stderr)")
        #expect(received.stderr.contains("wrote 300 access units"), "\(received.stderr)")
        #expect(!received.stderr.contains("p%40ss") && !received.stderr.contains("s3cret"), "no password in the output: \(received.stderr)")
        if camera.server.contains("--session-timeout") { #expect(elapsed > .seconds(8), "the recording outlived the session timeout") }
        if camera.server.contains("tcp") { #expect(received.stderr.contains("RTP on interleaved channel"), "\(received.stderr)") }
        let probe = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "framecrc", "-"])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        let frames = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(frames.count >= 300)
    }

    /// Without credentials (or with a wrong password) the camera's 401 is one error line.
    @Test(arguments: [[], ["--user", "viewer", "--password", "wrong"]]) func a401IsOneErrorLine(credentials: [String]) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try GStreamerRTSPServer(["--auth", "digest", "--user", "viewer", "--password", "s3cret"])
        defer { server.kill() }
        let received = try CLI.run(["receive", server.url, "-o", directory.appendingPathComponent("out.h264").path,
                                    "--idle-timeout", "5"] + credentials)
        #expect(received.status == 1)
        let lines = received.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("h264 receive: error: DESCRIBE \(server.url): 401 Unauthorized: ")
                && lines[0].hasSuffix(credentials.isEmpty ? "none was given" : "wrong user or password"), "\(received.stderr)")
    }
}
