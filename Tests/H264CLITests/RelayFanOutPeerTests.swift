import Foundation
import H264
import H264TestSupport
import Testing

/// The one fan-out against real peers: a camera of the suite's own (gst-rtsp-server, H.264 with
/// AAC) relayed at once to 10 RTSP viewers — FFmpeg and GStreamer `rtspsrc`, each over TCP and
/// UDP, every one written the same RTP packets made once for the stream — and to nginx-rtmp
/// through an RTMP sink.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RelayFanOutPeerTests {
    /// Viewer `index` plays 90 frames of `url`: FFmpeg over TCP, FFmpeg over UDP, GStreamer over
    /// TCP, GStreamer over UDP, in turn. Returns what went wrong, or nil.
    static func watch(_ url: String, viewer index: Int) throws -> String? {
        let transport = index % 2 == 0 ? "tcp" : "udp", label = "\(transport) \(index)"
        return index % 4 >= 2 ? try RelayPeerTests.gstreamerProblem(url, transport: transport, frames: 90, label: label)
            : try RelayPeerTests.ffmpegProblem(url, transport: transport, frames: 90, label: label)
    }

    @Test func aCameraWithAACRelayedToTenViewersAndNginx() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try GStreamerRTSPServer(["--audio", "aac"])
        defer { camera.kill() }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        let (relay, url) = try RelayPeerTests.relay(camera.url, ["--rtmp", nginx.url(key: "camera")])
        defer { relay.kill() }
        #expect(RelayPeerTests.problems(viewers: 10) { try Self.watch(url, viewer: $0) } == [])
        #expect(relay.stop() == 0)
        #expect(relay.waitForEventsEnd().filter { $0["event"] == "session-playing" }.count >= 10, "every viewer played")
        // nginx recorded what the relay's RTMP sink published while the viewers watched (≥ 3 s).
        let recorded = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-i", nginx.recording(key: "camera"),
                                                      "-f", "framecrc", "-"])
        let frames = String(decoding: recorded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(recorded.status == 0 && recorded.stderr.isEmpty, "\(recorded.stderr)")
        #expect(frames.count >= 90, "\(frames.count) frames in nginx's recording")
    }
}
