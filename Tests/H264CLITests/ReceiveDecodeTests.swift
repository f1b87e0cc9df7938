import Foundation
import H264
import H264TestSupport
import Testing

/// `h264 receive … -o OUT.y4m` and `--decoded OUT.y4m`: received access units decoded by a
/// `DecoderSession` as they arrive, written as y4m, frame for frame what FFmpeg decodes.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct ReceiveDecodeTests {
    /// The MD5 of every frame FFmpeg decodes from `path` (framemd5, 8-bit 4:2:0 planes).
    static func frameMD5s(_ path: String, format: [String] = []) throws -> [Substring] {
        let run = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error"] + format + ["-i", path, "-fps_mode", "passthrough",
                                                "-pix_fmt", "yuv420p", "-f", "framemd5", "-"])
        #expect(run.status == 0, "\(run.stderr)")
        return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespaces)[...] }
    }

    /// The y4m stream header line of `path`.
    static func y4mHeader(_ path: String) throws -> String {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }

    /// What `ffmpeg -re -c copy -f rtp` sends of a conformance stream, received with an SDP file
    /// and `-o out.y4m`: every frame FFmpeg decodes from the file, in order, none more; the
    /// rate from the RTP timestamps (the stream has no VUI timing), as ffprobe reads the file.
    @Test func sdpReceiveDecodesWhatFFmpegDecodes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.y4m").path
        let fixture = try TestFixtures.path(RTPPeerTests.fixture)
        let (status, log) = try RTPPeerTests.receiveFromFFmpeg(fixture, output: output, realTime: true, in: directory)
        #expect(status == 0, "\(log)")

        let expected = try Self.frameMD5s(fixture, format: ["-f", "h264"])
        let received = try Self.frameMD5s(output)
        #expect(!expected.isEmpty)
        #expect(received.count == expected.count, "\(log)")
        #expect(received == expected)
        #expect(log.contains("decoded \(expected.count) frames → \(output)"), "\(log)")

        let probe = try Subprocess.run("ffprobe", ["-v", "error", "-f", "h264", "-select_streams", "v:0",
                                                   "-show_entries", "stream=r_frame_rate", "-of", "csv=p=0", fixture])
        let rate = String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(rate.contains("/"))
        let header = try Self.y4mHeader(output)
        #expect(header.contains(" F\(rate.replacingOccurrences(of: "/", with: ":")) "), "\(header) vs \(rate)")
    }

    /// A stream whose size changes (the 176x144 conformance stream, then 320x240 pictures of
    /// `h264 encode`) ends `h264 receive -o out.y4m` as it ends `h264 decode` to y4m: an error
    /// naming the change, after the frames of the first size, the same frames for both.
    @Test func sizeChangeEndsTheY4MAsDecodeDoes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let second = directory.appendingPathComponent("second.h264").path
        let encoded = try CLI.run(["encode", TestFixtures.url("cars_320x240_30f.y4m").path, "-o", second, "--quiet"])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        let mixed = directory.appendingPathComponent("mixed.h264").path
        try Data(try TestFixtures.data(RTPPeerTests.fixture) + (try Data(contentsOf: URL(fileURLWithPath: second))))
            .write(to: URL(fileURLWithPath: mixed))

        let received = directory.appendingPathComponent("received.y4m").path
        let (status, log) = try RTPPeerTests.receiveFromFFmpeg(mixed, output: received, realTime: false, in: directory)
        let decodedPath = directory.appendingPathComponent("decoded.y4m").path
        let decoded = try CLI.run(["decode", mixed, "-o", decodedPath, "--quiet"])
        #expect(status == 1 && decoded.status == 1)
        for text in [log, decoded.stderr] {
            #expect(text.contains("is 320x240 yuv420p, the stream began 176x144 yuv420p: y4m cannot change"), "\(text)")
        }
        let first = try Self.frameMD5s(try TestFixtures.path(RTPPeerTests.fixture), format: ["-f", "h264"])
        #expect(try Self.frameMD5s(received) == first)
        #expect(try Self.frameMD5s(decodedPath) == first)
    }

    /// `h264 serve --rtsp` received over TCP interleaved and UDP with `-o out.h264 --decoded
    /// out.y4m --frames 30`: 30 frames of 320x240, equal to FFmpeg's decoding of the Annex-B the
    /// same receive wrote.
    @Test(arguments: ["tcp", "udp"]) func rtspReceiveDecodesThirtyFrames(transport: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let annexB = directory.appendingPathComponent("out.h264").path
        let y4m = directory.appendingPathComponent("out.y4m").path
        let server = try RTSPPeerTests.Server()
        let received = try CLI.run(["receive", server.url, "-o", annexB, "--decoded", y4m, "--frames", "30",
                                    "--idle-timeout", "10", "--transport", transport])
        #expect(received.status == 0, "\(received.stderr)")
        #expect(received.stderr.contains("decoded 30 frames → \(y4m)"), "\(received.stderr)")
        #expect(server.stop() == 0)
        #expect(server.waitForEventsEnd().contains { $0["event"] == "session-ended" && $0["reason"] == "teardown" }, "\(server.stderr)")

        let header = try Self.y4mHeader(y4m)
        #expect(header.hasPrefix("YUV4MPEG2 W320 H240 "), "\(header)")
        let decoded = try Self.frameMD5s(y4m)
        #expect(decoded.count == 30)
        // The receiver may have written a few access units more than it needed to decode 30
        // frames (decoding runs behind receiving): their frames come after the 30.
        let fromAnnexB = try Self.frameMD5s(annexB, format: ["-f", "h264"])
        #expect(fromAnnexB.count >= 30)
        #expect(Array(fromAnnexB.prefix(30)) == decoded)
    }

    /// `--decoded` beside a y4m `-o` is refused before anything is opened.
    @Test func decodedNeedsAnAnnexBOutput() throws {
        let run = try CLI.run(["receive", "rtsp://127.0.0.1:9/live", "-o", "x.y4m", "--decoded", "y.y4m"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--decoded writes y4m beside the Annex-B of -o"), "\(run.stderr)")
    }
}
