import Foundation
import H264
import H264Streaming
import H264TestSupport
import NIOPosix
import Testing

/// An RTMP publisher's AAC through `h264 relay --listen rtmp://…`: FFmpeg publishes H.264 and a
/// 440 Hz tone as AAC (`-f flv`), the relay's RTSP mount describes the audio track (its format
/// from the AAC sequence header, seen before the first keyframe), and an RTSP viewer receives
/// the very AAC frames FFmpeg encoded.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct RTMPIngestAudioPeerTests {
    /// The tone's source and AAC options, the same for the reference file and the publisher:
    /// FFmpeg's AAC encoder is deterministic, so both hold the same frames.
    static let tone = ["-f", "lavfi", "-i", "sine=f=440:r=44100"]

    /// Where `run` is found in `frames` as a contiguous run; nil when it is not.
    static func contiguousRun(_ run: [[UInt8]], in frames: [[UInt8]]) -> Int? {
        guard let first = run.first else { return nil }
        return frames.indices.first { start in
            frames[start] == first && start + run.count <= frames.count && Array(frames[start..<(start + run.count)]) == run
        }
    }

    @Test func anRTMPPublishersAACReachesRTSPViewersByteForByte() async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The reference: the same tone, the same encoder, written as ADTS.
        let reference = directory.appendingPathComponent("tone.aac").path
        let encode = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error"] + Self.tone
                                        + ["-c:a", "aac", "-t", "10", "-f", "adts", "-y", reference])
        #expect(encode.status == 0, "\(encode.stderr)")
        let expected = try ADTSFrames.frames(try [UInt8](Data(contentsOf: URL(fileURLWithPath: reference))))
        try #require(expected.count > 300, "\(expected.count) reference frames")

        let relay = try LoggingProcess(executable: CLI.executable, ["relay", "--listen", "rtmp://127.0.0.1:0/live/key", "--rtsp", "127.0.0.1:0"],
                                       untilListening: "rtmp")
        defer { relay.kill() }
        let port = try #require(relay.listeningPort(scheme: "rtmp"), "\(relay.stderr)")
        let publisher = try LoggingProcess(executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                                           ["-nostdin", "-v", "info", "-nostats", "-re", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30",
                                            "-re"] + Self.tone
                                           + ["-c:v", "libx264", "-g", "30", "-bf", "0", "-c:a", "aac", "-t", "10", "-f", "flv",
                                              "rtmp://127.0.0.1:\(port)/live/key"])
        defer { publisher.kill() }
        // The RTSP URL is announced once the stream is mounted.
        try #require(relay.wait(timeout: 20) { events in events.contains { $0["event"] == "listening" && $0["url"]?.hasPrefix("rtsp://") == true } },
                     "\(relay.stderr)")
        let url = try #require(relay.events(named: "listening").compactMap { $0["url"] }.first { $0.hasPrefix("rtsp://") })

        // Our viewer collects 60 audio frames (1.4 s), or gives up after 15 s.
        let (media, received) = try await RecordAudioPeerTests.receiveAudio(url, count: 60)
        #expect(media?.format.codec == .aac && media?.control?.hasSuffix("track2") == true, "\(String(describing: media))")
        #expect(received.count == 60, "\(received.count) audio frames")
        let start = Self.contiguousRun(received, in: expected)
        #expect(start != nil, "the received frames are not a run of FFmpeg's (\(received.map(\.count).prefix(8)) bytes …)")

        // FFmpeg finds both tracks and decodes them without an error line.
        #expect(try RelayAudioPeerTests.probe(url, transport: "tcp") == ["h264", "aac"], "\(relay.stderr)")
        let decode = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                    "-t", "2", "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        publisher.kill()
        #expect(relay.waitForExit(timeout: 20) == 0, "\(relay.stderr)")
    }
}
