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
        let transport = index % 2 == 0 ? "tcp" : "udp"
        if index % 4 >= 2 {
            let gst = try Subprocess.run("timeout", ["60", "gst-launch-1.0", "-q", "rtspsrc", "location=\(url)", "protocols=\(transport)",
                                                     "!", "rtph264depay", "!", "avdec_h264", "!", "identity", "eos-after=90", "!",
                                                     "y4menc", "!", "fdsink", "fd=1"])
            // GStreamer 1.22's shutdown race (see GStreamerShutdownRace) may follow the frames; nothing else may.
            let report = GStreamerShutdownRace.split(gst.stderr)
            let frameBytes = gst.stdout.count - (gst.stdout.firstIndex(of: 0x0A) ?? 0) - 1
            let clean = (gst.status == 0 || report.raceErrors > 0) && !report.rest.contains("ERROR") && !report.rest.contains("WARNING")
            return clean && frameBytes / (6 + 115_200) >= 90
                ? nil : "gstreamer \(transport) \(index): status \(gst.status), \(frameBytes) bytes: \(gst.stderr)"
        }
        let ffmpeg = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport,
                                                    "-i", url, "-map", "0:v", "-frames:v", "90", "-f", "framecrc", "-"])
        let frames = String(decoding: ffmpeg.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        return ffmpeg.status == 0 && ffmpeg.stderr.isEmpty && frames.count == 90
            ? nil : "ffmpeg \(transport) \(index): status \(ffmpeg.status), \(frames.count) frames: \(ffmpeg.stderr)"
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
        let results = Locked([String]())
        RelayPeerTests.concurrently((0..<10).map { index in {
            do {
                if let problem = try Self.watch(url, viewer: index) { results.withLock { $0.append(problem) } }
            } catch {
                results.withLock { $0.append("viewer \(index): \(error)") }
            }
        } })
        #expect(results.withLock { $0 } == [])
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
