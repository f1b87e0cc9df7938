import Foundation
import H264TestSupport
import Testing

/// MP4 where the other commands read or write a file (issue 36): `decode` gives FFmpeg's
/// pictures of an MP4, `transcode` reads an MP4 and writes one, `encode` writes one, and
/// `relay FILE.mp4` serves its video and audio by the file's times, looping. Every program runs under `timeout` or a time limit.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct MP4InputTests {
    /// A 3 s MP4 of FFmpeg's: x264 with 3 B-frames, an IDR a second, and AAC.
    static func source(_ directory: URL) throws -> String {
        let path = directory.appendingPathComponent("source.mp4").path
        let encode = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                    "-f", "lavfi", "-i", "sine=frequency=440", "-t", "3", "-c:v", "libx264", "-bf", "3", "-g", "30",
                                                    "-c:a", "aac", "-y", path])
        try #require(encode.status == 0, "\(encode.stderr)")
        return path
    }

    @Test func decodeOfAnMP4GivesFFmpegsPictures() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory)
        let ours = directory.appendingPathComponent("ours.framemd5").path
        let decode = try Subprocess.run("timeout", ["60", CLI.executable.path, "decode", source, "--framemd5", "-o", ours])
        #expect(decode.status == 0, "\(decode.stderr)")
        let md5s = { (text: String) in text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last } }
        let theirs = try ConvertMP4Tests.framemd5(source)
        let decoded = md5s(try String(contentsOfFile: ours, encoding: .utf8)).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(decoded.count == 90 && decoded == theirs.lines, "\(decoded.count) pictures, FFmpeg's \(theirs.lines.count)")
    }

    @Test func transcodeReadsAnMP4AndWritesOne() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory)
        let output = directory.appendingPathComponent("out.mp4").path
        let transcode = try Subprocess.run("timeout", ["60", CLI.executable.path, "transcode", source, "-o", output, "--allow-frame-reordering"])
        #expect(transcode.status == 0, "\(transcode.stderr)")
        #expect(try ReceiveMP4Tests.topLevelBoxes(output) == ["ftyp", "moov", "mdat"])
        let decoded = try ConvertMP4Tests.framemd5(output)
        #expect(decoded.errors.isEmpty && decoded.lines.count == 90, "\(decoded.lines.count) pictures: \(decoded.errors)")
        let streams = try ReceiveMP4Tests.probe(output, ["-show_entries", "stream=codec_name,codec_tag_string"])
        #expect(streams == [["h264", "avc1"]], "\(streams)")
    }

    @Test func encodeWritesAnMP4() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("cars.mp4").path
        let encode = try Subprocess.run("timeout", ["60", CLI.executable.path, "encode", TestFixtures.url("cars_320x240_30f.y4m").path, "-o", output])
        #expect(encode.status == 0, "\(encode.stderr)")
        #expect(try ReceiveMP4Tests.topLevelBoxes(output) == ["ftyp", "moov", "mdat"])
        let decoded = try ConvertMP4Tests.framemd5(output)
        #expect(decoded.errors.isEmpty && decoded.lines.count == 30, "\(decoded.lines.count) pictures: \(decoded.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cars.mp4"])
    }

    @Test func relayOfAnMP4ServesBothTracksAndLoops() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory)
        let (relay, url) = try RelayPeerTests.relay(source, ["--loop"])
        defer { relay.kill() }
        #expect(try RelayAudioPeerTests.probe(url, transport: "tcp") == ["h264", "aac"])
        // 5 s: across the end of the 3 s file and on into its second pass.
        let both = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                  "-map", "0:v", "-t", "5", "-f", "framecrc", "-"])
        let pictures = String(decoding: both.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count
        #expect(both.status == 0 && both.stderr.isEmpty, "\(both.stderr)")
        #expect(pictures >= 140, "\(pictures) pictures in 5 s")
        #expect(relay.stop() == 0)
    }
}
