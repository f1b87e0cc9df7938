import Foundation
import H264TestSupport
import Testing

/// `h264 inspect` of an FLV file or an SDP lists its tracks, the audio one included, as FFmpeg
/// reads them.
@Suite(.timeLimit(.minutes(2))) struct InspectTracksTests {
    /// An FLV file FFmpeg writes (libx264 + its AAC encoder, 1 s): the same tracks, codecs, size,
    /// rate and channels as ffprobe reports, and the frame counts of its packets.
    @Test func anFLVsTracksAreFFprobes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("av.flv").path
        let made = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30",
                                                  "-f", "lavfi", "-i", "sine=f=440:r=44100", "-c:v", "libx264", "-c:a", "aac", "-t", "1", file])
        try #require(made.status == 0, "\(made.stderr)")
        let inspected = try CLI.run(["inspect", file, "--json"])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        let listing = try #require(try JSONSerialization.jsonObject(with: inspected.stdout) as? [String: Any])
        let tracks = try #require(listing["tracks"] as? [[String: Any]])
        let probe = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-count_packets", "-show_entries",
                                                   "stream=codec_type,codec_name,width,height,sample_rate,channels,nb_read_packets",
                                                   "-of", "json", file])
        let streams = try #require((try JSONSerialization.jsonObject(with: Data(probe.stdout)) as? [String: Any])?["streams"] as? [[String: Any]])
        #expect(tracks.count == streams.count)
        for stream in streams {
            let type = stream["codec_type"] as? String
            let track = try #require(tracks.first { $0["type"] as? String == type }, "no \(type ?? "?") track: \(tracks)")
            #expect(track["codec"] as? String == stream["codec_name"] as? String)
            #expect(track["frames"] as? Int == Int(stream["nb_read_packets"] as? String ?? ""))
            if type == "video" {
                #expect(track["width"] as? Int == stream["width"] as? Int && track["height"] as? Int == stream["height"] as? Int)
            } else {
                #expect(track["sampleRate"] as? Int == Int(stream["sample_rate"] as? String ?? ""))
                #expect(track["channels"] as? Int == stream["channels"] as? Int)
            }
        }
    }

    /// An SDP of a camera with H.264 and AAC (RFC 3640): both tracks, the audio's rate, channels
    /// and `config` as its `a=fmtp` says.
    @Test func anSDPsTracksAreListed() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdp = directory.appendingPathComponent("camera.sdp").path
        try Data("""
            v=0\r
            o=- 0 0 IN IP4 127.0.0.1\r
            s=camera\r
            c=IN IP4 127.0.0.1\r
            t=0 0\r
            m=video 5000 RTP/AVP 96\r
            a=rtpmap:96 H264/90000\r
            a=fmtp:96 packetization-mode=1; sprop-parameter-sets=Z0IAHpWoKA9k,aM48gA==\r
            m=audio 5002 RTP/AVP 97\r
            a=rtpmap:97 MPEG4-GENERIC/48000/2\r
            a=fmtp:97 profile-level-id=1;mode=AAC-hbr;sizelength=13;indexlength=3;indexdeltalength=3;config=1190\r

            """.utf8).write(to: URL(fileURLWithPath: sdp))
        let inspected = try CLI.run(["inspect", sdp])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        #expect(inspected.stdoutText.split(separator: "\n") == [
            "track 0: video h264 (RTP 96 H264), config 6742001e95a8280f64,68ce3c80",
            "track 1: audio aac 48000 Hz 2 ch (RTP 97 MPEG4-GENERIC), config 1190",
        ])
    }
}
