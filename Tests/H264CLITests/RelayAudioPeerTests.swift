import Foundation
import H264
import H264TestSupport
import Testing

/// A camera's audio through `h264 relay`, against real peers: gst-rtsp-server sends H.264 with
/// AAC, G.711 A-law or µ-law, or Opus; FFmpeg and GStreamer play the relay and find both tracks,
/// the audio in the camera's codec, and decode both without an error.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RelayAudioPeerTests {
    /// The script's `--audio` value and the codec FFmpeg names.
    static let codecs: [(script: String, ffmpeg: String)] = [
        ("aac", "aac"), ("pcma", "pcm_alaw"), ("pcmu", "pcm_mulaw"), ("opus", "opus"),
    ]

    /// The codec names ffprobe gives for `url`'s streams, in order.
    static func probe(_ url: String, transport: String) throws -> [String] {
        let probe = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-rtsp_transport", transport, "-show_entries",
                                                   "stream=codec_name", "-of", "csv=p=0", url])
        return String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// FFmpeg decodes 3 s of `url`'s `map` streams over `transport`: its error lines and the
    /// frames decoded (framecrc lines).
    static func decode(_ url: String, transport: String, map: String) throws -> (errors: String, frames: Int, status: Int32) {
        let ffmpeg = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport, "-i", url,
                                                    "-map", map, "-t", "3", "-f", "framecrc", "-"])
        let frames = String(decoding: ffmpeg.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        return (ffmpeg.stderr, frames.count, ffmpeg.status)
    }

    @Test(arguments: codecs.map(\.script))
    func aCameraWithAudioRelayedOverTCP(_ audio: String) throws {
        let expected = Self.codecs.first { $0.script == audio }!.ffmpeg
        let camera = try GStreamerRTSPServer(["--audio", audio])
        defer { camera.kill() }
        let (relay, url) = try RelayPeerTests.relay(camera.url, [])
        defer { relay.kill() }
        #expect(try Self.probe(url, transport: "tcp") == ["h264", expected])
        let both = try Self.decode(url, transport: "tcp", map: "0")
        #expect(both.status == 0 && both.errors.isEmpty, "\(both.errors)")
        let sound = try Self.decode(url, transport: "tcp", map: "0:a")
        #expect(sound.status == 0 && sound.errors.isEmpty && sound.frames > 0, "\(sound.frames) audio frames: \(sound.errors)")
        let pictures = try Self.decode(url, transport: "tcp", map: "0:v")
        #expect(pictures.frames > 0, "\(pictures.frames) video frames: \(pictures.errors)")
        #expect(relay.stop() == 0)
    }

    @Test(arguments: codecs.map(\.script))
    func aCameraWithAudioRelayedOverUDP(_ audio: String) throws {
        let expected = Self.codecs.first { $0.script == audio }!.ffmpeg
        let camera = try GStreamerRTSPServer(["--audio", audio])
        defer { camera.kill() }
        let (relay, url) = try RelayPeerTests.relay(camera.url, [])
        defer { relay.kill() }
        #expect(try Self.probe(url, transport: "udp") == ["h264", expected])
        let sound = try Self.decode(url, transport: "udp", map: "0:a")
        #expect(sound.status == 0 && sound.errors.isEmpty && sound.frames > 0, "\(sound.frames) audio frames: \(sound.errors)")
        #expect(relay.stop() == 0)
    }

    @Test(arguments: codecs.map(\.script))
    func gstreamerDecodesTheRelayedAudio(_ audio: String) throws {
        let camera = try GStreamerRTSPServer(["--audio", audio])
        defer { camera.kill() }
        let (relay, url) = try RelayPeerTests.relay(camera.url, [])
        defer { relay.kill() }
        let gst = try Subprocess.run("timeout", ["60", "gst-launch-1.0", "-q", "rtspsrc", "location=\(url)", "protocols=tcp", "name=s",
                                                 "s.", "!", "application/x-rtp,media=audio", "!", "decodebin", "!", "audioconvert", "!",
                                                 "identity", "eos-after=100", "!", "fakesink",
                                                 "s.", "!", "application/x-rtp,media=video", "!", "decodebin", "!", "fakesink"])
        let report = GStreamerShutdownRace.split(gst.stderr)
        #expect((gst.status == 0 || report.raceErrors > 0) && !report.rest.contains("ERROR"), "status \(gst.status): \(gst.stderr)")
        #expect(relay.stop() == 0)
    }
}

/// A publisher's audio through `h264 relay --listen`: FFmpeg publishes H.264 with AAC, G.711
/// µ-law or Opus (`-f rtsp`, ANNOUNCE with both tracks, SETUP of each, RECORD), FFmpeg plays
/// the relay and finds both tracks, the audio in the publisher's codec, and decodes both.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RecordAudioPeerTests {
    /// The publisher's audio options and the codec FFmpeg names when it plays the relay.
    static let codecs: [(options: [String], ffmpeg: String)] = [
        (["-c:a", "aac"], "aac"),
        (["-c:a", "pcm_mulaw", "-ar", "8000", "-ac", "1"], "pcm_mulaw"),
        (["-c:a", "libopus", "-ar", "48000"], "opus"),
    ]

    @Test(arguments: codecs.map(\.ffmpeg))
    func aPublishersAudioIsRelayedToFFmpeg(_ codec: String) throws {
        let audio = Self.codecs.first { $0.ffmpeg == codec }!.options
        let relay = try LoggingProcess(executable: CLI.executable, ["relay", "--listen", "rtsp://127.0.0.1:0/in", "--rtsp", "127.0.0.1:0"],
                                       untilListening: "rtsp")
        defer { relay.kill() }
        let publishURL = try #require(relay.events(named: "listening").first?["url"], "\(relay.stderr)")
        let publisher = try LoggingProcess(executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                                           ["-nostdin", "-v", "info", "-nostats", "-re", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30",
                                            "-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                                            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30"]
                                           + audio + ["-f", "rtsp", "-rtsp_transport", "tcp", publishURL])
        defer { publisher.kill() }
        try #require(relay.wait(timeout: 20) { $0.filter { $0["event"] == "listening" }.count == 2 }, "\(relay.stderr)")
        let viewURL = try #require(relay.events(named: "listening").last?["url"])
        #expect(try RelayAudioPeerTests.probe(viewURL, transport: "tcp") == ["h264", codec], "\(relay.stderr)")
        let both = try RelayAudioPeerTests.decode(viewURL, transport: "tcp", map: "0")
        #expect(both.status == 0 && both.errors.isEmpty, "\(both.errors)")
        let sound = try RelayAudioPeerTests.decode(viewURL, transport: "tcp", map: "0:a")
        #expect(sound.status == 0 && sound.errors.isEmpty && sound.frames > 0, "\(sound.frames) audio frames: \(sound.errors)")
        let pictures = try RelayAudioPeerTests.decode(viewURL, transport: "tcp", map: "0:v")
        #expect(pictures.frames > 0, "\(pictures.frames) video frames: \(pictures.errors)")
        publisher.kill()
        #expect(relay.waitForExit(timeout: 20) == 0, "\(relay.stderr)")
    }
}
