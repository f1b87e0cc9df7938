import Foundation
import H264
import H264Streaming
import H264TestSupport
import NIOPosix
import RTP
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
/// the relay and finds both tracks, the audio in the publisher's codec, and decodes both; an
/// RTSP viewer of ours receives the very audio FFmpeg encoded (its encoders are deterministic:
/// the same tone encoded again to a file is the reference).
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RecordAudioPeerTests {
    /// The publisher's audio options and the codec FFmpeg names when it plays the relay.
    static let codecs: [(options: [String], ffmpeg: String)] = [
        (["-c:a", "aac"], "aac"),
        (["-c:a", "pcm_mulaw", "-ar", "8000", "-ac", "1"], "pcm_mulaw"),
        (["-c:a", "libopus", "-ar", "48000"], "opus"),
    ]

    /// The publisher's tone.
    static let tone = ["-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]

    /// `codec`'s reference: the tone encoded as the publisher encodes it, as FFmpeg's packets
    /// (size and Adler-32 of each, `-f framecrc`) and, for G.711, as one run of bytes (`-f mulaw`:
    /// RTP cuts G.711 where it likes, so its packets are not FFmpeg's).
    static func reference(_ codec: String, options: [String]) throws -> (packets: [Packet], bytes: [UInt8]) {
        // A minute: the viewer joins some 10–20 s into the publisher's stream.
        let source = Array(tone.dropFirst()) + options + ["-t", "60"]
        let crc = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error"] + source + ["-f", "framecrc", "-"])
        let packets = String(decoding: crc.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return fields.count >= 6 ? Packet(size: Int(fields[4]) ?? -1, adler32: UInt32(fields[5].dropFirst(2), radix: 16) ?? 0) : nil
        }
        guard codec == "pcm_mulaw" else { return (packets, []) }
        let raw = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error"] + source + ["-f", "mulaw", "-"])
        return (packets, raw.stdout)
    }

    /// One audio packet as FFmpeg's framecrc muxer describes it.
    struct Packet: Equatable {
        var size: Int
        var adler32: UInt32

        init(size: Int, adler32: UInt32) { (self.size, self.adler32) = (size, adler32) }

        /// The packet of `bytes` (Adler-32 as FFmpeg's `av_adler32_update` from 0 computes it).
        init(_ bytes: [UInt8]) {
            var (a, b): (UInt32, UInt32) = (0, 0)
            for byte in bytes { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
            self.init(size: bytes.count, adler32: b << 16 | a)
        }
    }

    /// The first `count` audio frames an `RTSPClient` receives from `url` (or fewer after 15 s),
    /// and the audio track its SDP described.
    static func receiveAudio(_ url: String, count: Int) async throws -> (media: AudioMediaDescription?, frames: [[UInt8]]) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = RTSPClient.Configuration()
        configuration.transport = .tcp
        configuration.idleTimeout = .seconds(10)
        let client = try await RTSPClient.open(url: url, group: group, configuration: configuration)
        let media = client.audioMedia
        let deadline = Task {
            try? await Task.sleep(for: .seconds(15))
            await client.close()
        }
        var received: [[UInt8]] = []
        for await event in client {
            if case .frame(let frame) = event, frame.frame.audioFormat != nil { received.append(frame.frame.data) }
            if received.count == count { break }
        }
        deadline.cancel()
        await client.close()
        try await group.shutdownGracefully()
        return (media, received)
    }

    @Test(arguments: codecs.map(\.ffmpeg))
    func aPublishersAudioIsRelayedToFFmpeg(_ codec: String) async throws {
        let audio = Self.codecs.first { $0.ffmpeg == codec }!.options
        let relay = try LoggingProcess(executable: CLI.executable, ["relay", "--listen", "rtsp://127.0.0.1:0/in", "--rtsp", "127.0.0.1:0"],
                                       untilListening: "rtsp")
        defer { relay.kill() }
        let publishURL = try #require(relay.events(named: "listening").first?["url"], "\(relay.stderr)")
        let publisher = try LoggingProcess(executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                                           ["-nostdin", "-v", "info", "-nostats", "-re", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30",
                                           ] + Self.tone + [
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

        // The same bytes FFmpeg encoded: a run of its packets (AAC, Opus), a run of its bytes (G.711).
        let reference = try Self.reference(codec, options: audio)
        try #require(reference.packets.count > 100, "\(reference.packets.count) reference packets")
        let received = try await Self.receiveAudio(viewURL, count: 40).frames
        #expect(received.count == 40, "\(received.count) audio frames")
        if codec == "pcm_mulaw" {
            let bytes = received.flatMap { $0 }
            let found = bytes.count > 0 && reference.bytes.indices.contains { start in
                start + bytes.count <= reference.bytes.count && reference.bytes[start] == bytes[0]
                    && reference.bytes[start..<(start + bytes.count)].elementsEqual(bytes)
            }
            #expect(found, "the \(bytes.count) received G.711 bytes are not a run of FFmpeg's \(reference.bytes.count)")
        } else {
            let packets = received.map(Packet.init)
            let start = reference.packets.indices.first { start in
                start + packets.count <= reference.packets.count && Array(reference.packets[start..<(start + packets.count)]) == packets
            }
            #expect(start != nil, "the received frames are not a run of FFmpeg's (\(packets.prefix(4)) …)")
        }
        publisher.kill()
        #expect(relay.waitForExit(timeout: 20) == 0, "\(relay.stderr)")
    }
}
