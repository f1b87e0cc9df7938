import Foundation
import H264TestSupport
import Testing

/// The MP4 recorder as a sink of the live fan-out (issue 36): `h264 relay … -o x.mp4` records a
/// camera with its audio while it serves viewers, `--segment-duration` cuts a relayed file into
/// files that each start at a keyframe and together hold every picture, and `h264 serve … -o`
/// records what it encodes. FFmpeg reads every file; every program runs under `timeout` or a
/// time limit.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct RecordMP4Tests {
    @Test func aRelayedCameraIsRecordedWithItsAACWhileViewersWatch() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try GStreamerRTSPServer(["--audio", "aac"])
        defer { camera.kill() }
        let output = directory.appendingPathComponent("relay.mp4").path
        let (relay, url) = try RelayPeerTests.relay(camera.url, ["-o", output])
        defer { relay.kill() }
        // A viewer plays 3 s through the relay meanwhile: the recording is no less than that.
        let viewer = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                    "-t", "3", "-f", "null", "-"])
        #expect(viewer.status == 0 && viewer.stderr.isEmpty, "\(viewer.stderr)")
        #expect(relay.stop() == 0, "\(relay.stderr)")
        #expect(try ReceiveMP4Tests.topLevelBoxes(output) == ["ftyp", "moov", "mdat"])
        let streams = try ReceiveMP4Tests.probe(output, ["-show_entries", "stream=codec_name"]).compactMap(\.first)
        #expect(streams == ["h264", "aac"], "\(streams)")
        let decoded = try ReceiveMP4Tests.decode(output)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.videoFrames >= 90, "\(decoded.videoFrames) pictures")
        #expect(relay.stderr.contains("as MP4"), "\(relay.stderr)")
    }

    /// 5 s of `testsrc2` at 30 fps, an IDR every second, no B-frames, as Annex-B in `directory`.
    static func fiveSeconds(in directory: URL) throws -> String {
        let source = directory.appendingPathComponent("source.264").path
        let encode = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                    "-t", "5", "-c:v", "libx264", "-bf", "0", "-g", "30", "-f", "h264", "-y", source])
        try #require(encode.status == 0, "\(encode.stderr)")
        return source
    }

    @Test func aRelayedFileInSegmentsHoldsEveryPictureEachFileFromAKeyframe() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.fiveSeconds(in: directory)
        let pattern = directory.appendingPathComponent("seg-%03d.mp4").path
        let relay = try Subprocess.run("timeout", ["60", CLI.executable.path, "relay", source, "-o", pattern, "--segment-duration", "2"])
        #expect(relay.status == 0, "\(relay.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("seg-") }.sorted()
        #expect(files == ["seg-001.mp4", "seg-002.mp4", "seg-003.mp4"], "\(files)")
        var recorded: [String] = []
        for file in files {
            let path = directory.appendingPathComponent(file).path
            let decoded = try ConvertMP4Tests.framemd5(path)
            #expect(decoded.errors.isEmpty, "\(file): \(decoded.errors)")
            recorded += decoded.lines
            let first = try ReceiveMP4Tests.probe(path, ["-select_streams", "v", "-show_entries", "packet=pts_time,flags", "-read_intervals", "%+#1"])
            #expect(first.first?.first == "0.000000" && first.first?.last?.hasPrefix("K") == true, "\(file) starts with \(first)")
        }
        let expected = try ConvertMP4Tests.framemd5(source)
        #expect(recorded.count == 150 && recorded == expected.lines, "\(recorded.count) pictures recorded of \(expected.lines.count)")
    }

    @Test func serveRecordsWhatItEncodes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("served.mp4").path
        let serve = try Subprocess.run("timeout", ["60", CLI.executable.path, "serve", TestFixtures.url("cars_320x240_30f.y4m").path, "-o", output])
        #expect(serve.status == 0, "\(serve.stderr)")
        #expect(try ReceiveMP4Tests.topLevelBoxes(output) == ["ftyp", "moov", "mdat"])
        let decoded = try ConvertMP4Tests.framemd5(output)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.lines.count == 30, "\(decoded.lines.count) pictures")
        let duration = try ReceiveMP4Tests.probe(output, ["-select_streams", "v", "-show_entries", "stream=duration"])
        #expect(duration.first?.first == "1.000000", "\(duration)")
    }
}
