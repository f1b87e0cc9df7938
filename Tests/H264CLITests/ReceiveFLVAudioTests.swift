import Foundation
import H264TestSupport
import Testing

/// `h264 receive rtsp://… -o x.flv`: a camera's two tracks in one FLV file that FFmpeg reads
/// whole; and with `-o x.h264` the audio left out, said once.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ReceiveFLVAudioTests {
    /// The suite's AAC camera (gst-rtsp-server, a 440 Hz tone beside H.264) received for 150
    /// frames into FLV: FFmpeg finds H.264 and AAC, decodes both without an error line, and the
    /// two tracks' durations are within 200 ms of each other.
    @Test func anAACCamerasTracksBothGoIntoTheFLV() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try GStreamerRTSPServer(["--audio", "aac"])
        defer { camera.kill() }
        let output = directory.appendingPathComponent("camera.flv").path
        let received = try CLI.run(["receive", camera.url, "-o", output, "--frames", "150", "--idle-timeout", "10"])
        #expect(received.status == 0, "\(received.stderr)")
        let probe = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-show_entries", "stream=codec_name,codec_type",
                                                   "-of", "csv=p=0", output])
        let codecs = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map { String($0.split(separator: ",").first ?? "") }
        #expect(codecs.sorted() == ["aac", "h264"], "\(codecs)")
        let decoded = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-i", output, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        // Each track's span: its last packet's time plus duration, less its first packet's time.
        let packets = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-show_entries", "packet=codec_type,pts_time,duration_time",
                                                     "-of", "csv=p=0", output])
        var spans: [String: (first: Double, end: Double)] = [:]
        for line in String(decoding: packets.stdout, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: ",").map(String.init)
            guard fields.count >= 3, let time = Double(fields[1]) else { continue }
            let end = time + (Double(fields[2]) ?? 0)
            let span = spans[fields[0]] ?? (time, end)
            spans[fields[0]] = (min(span.first, time), max(span.end, end))
        }
        let video = try #require(spans["video"]), audio = try #require(spans["audio"])
        let (videoSeconds, audioSeconds) = (video.end - video.first, audio.end - audio.first)
        #expect(videoSeconds >= 4.5, "video \(videoSeconds) s")
        #expect(abs(videoSeconds - audioSeconds) <= 0.2, "video \(videoSeconds) s, audio \(audioSeconds) s")
    }

    /// To Annex-B the audio is left out, and said once on standard error.
    @Test func anElementaryOutputLeavesTheAudioOutAndSaysItOnce() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try GStreamerRTSPServer(["--audio", "aac"])
        defer { camera.kill() }
        let output = directory.appendingPathComponent("camera.h264").path
        let received = try CLI.run(["receive", camera.url, "-o", output, "--frames", "60", "--idle-timeout", "10"])
        #expect(received.status == 0, "\(received.stderr)")
        let lines = received.stderr.split(separator: "\n").filter { $0.contains("audio track is left out") }
        #expect(lines.count == 1, "\(received.stderr)")
        let probe = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", output])
        #expect(String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n") == ["h264"])
    }
}
