import Foundation
import H264
import H264TestSupport
import Testing

/// The relay's RTMP outputs with audio, against nginx-rtmp and FFmpeg: a camera's tone reaches
/// the recording as AAC (G.711 and Opus converted by libavcodec), and a camera without a
/// microphone gets the silent AAC track streaming services require (`--silent-audio`).
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RelayRTMPAudioPeerTests {
    /// What FFmpeg reads of nginx's recording of `key`.
    struct Recording {
        var codecs: [String]
        var maximumVolume: Double
        /// The first packet's time of each stream, by codec type.
        var firstVideo: Double?
        var firstAudio: Double?
        var decodeErrors: String
    }

    /// Relays `camera` to nginx with `arguments`, while one FFmpeg viewer plays 90 frames over
    /// RTSP (≥ 3 s of stream reach nginx meanwhile), then reads the recording.
    static func relayToNginx(_ camera: GStreamerRTSPServer, _ arguments: [String]) throws -> Recording {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        let (relay, url) = try RelayPeerTests.relay(camera.url, ["--rtmp", nginx.url(key: "camera")] + arguments)
        defer { relay.kill() }
        #expect(try RelayPeerTests.ffmpegProblem(url, transport: "tcp", frames: 90, label: "viewer") == nil)
        #expect(relay.stop() == 0, "\(relay.stderr)")
        let file = nginx.recording(key: "camera")
        let probe = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-show_entries", "stream=codec_name,codec_type",
                                                   "-of", "csv=p=0", file])
        let streams = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        let packets = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts_time",
                                                     "-of", "csv=p=0", file])
        var first: [Int: Double] = [:]
        for line in String(decoding: packets.stdout, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: ",")
            if fields.count >= 2, let index = Int(fields[0]), let time = Double(fields[1]), first[index] == nil { first[index] = time }
        }
        let typeIndex = Dictionary(streams.enumerated().compactMap { $1.count == 2 ? ($1[1], $0) : nil }, uniquingKeysWith: { a, _ in a })
        let decoded = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-i", file, "-f", "null", "-"])
        let volume = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", file, "-map", "0:a",
                                                    "-af", "volumedetect", "-f", "null", "-"])
        let line = volume.stderr.split(separator: "\n").first { $0.contains("max_volume:") }
        let level = line.flatMap { $0.split(separator: "max_volume:").last?.split(separator: " ").first.flatMap { Double($0) } }
        return Recording(codecs: streams.compactMap(\.first), maximumVolume: level ?? .nan,
                         firstVideo: typeIndex["video"].flatMap { first[$0] }, firstAudio: typeIndex["audio"].flatMap { first[$0] },
                         decodeErrors: decoded.stderr)
    }

    /// A camera without audio relayed with `--silent-audio`: nginx records H.264 and AAC, FFmpeg
    /// decodes both without an error line, measures the audio as digital silence (−91 dB), and
    /// the first audio and video timestamps are within 100 ms.
    @Test func aCameraWithoutAudioGetsASilentAACTrack() throws {
        let camera = try GStreamerRTSPServer([])
        defer { camera.kill() }
        let recording = try Self.relayToNginx(camera, ["--silent-audio"])
        #expect(recording.codecs.sorted() == ["aac", "h264"], "\(recording.codecs)")
        #expect(recording.decodeErrors.isEmpty, "\(recording.decodeErrors)")
        #expect(recording.maximumVolume == -91, "max_volume \(recording.maximumVolume) dB")
        let (video, audio) = (try #require(recording.firstVideo), try #require(recording.firstAudio))
        #expect(abs(video - audio) <= 0.1, "first video \(video) s, first audio \(audio) s")
    }

    /// A camera sending a 440 Hz tone (gst `audiotestsrc`, volume 0.8: −1.9 dBFS) as AAC, G.711
    /// A-law or µ-law, or Opus: nginx's recording holds H.264 and AAC that FFmpeg decodes without
    /// an error line, the tone within 3 dB of the source's level, first timestamps within 100 ms.
    @Test(arguments: ["aac", "pcma", "pcmu", "opus"])
    func aCamerasToneReachesNginxAsAAC(audio: String) throws {
        let camera = try GStreamerRTSPServer(["--audio", audio])
        defer { camera.kill() }
        let recording = try Self.relayToNginx(camera, [])
        #expect(recording.codecs.sorted() == ["aac", "h264"], "\(recording.codecs)")
        #expect(recording.decodeErrors.isEmpty, "\(recording.decodeErrors)")
        #expect(abs(recording.maximumVolume - 20 * log10(0.8)) <= 3, "max_volume \(recording.maximumVolume) dB")
        let (video, audioTime) = (try #require(recording.firstVideo), try #require(recording.firstAudio))
        #expect(abs(video - audioTime) <= 0.1, "first video \(video) s, first audio \(audioTime) s")
    }
}
