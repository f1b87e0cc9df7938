import Foundation
import H264TestSupport
import Testing

/// `h264 convert INPUT -o DIR/index.m3u8` (issue 37): HLS VOD from FLV, MP4 and Annex-B input,
/// fMP4 segments cut at keyframes beside the playlist. FFmpeg reads the playlist with no error
/// line and decodes the source's pictures, and copies the source's AAC frames out of it;
/// headless Chromium (Scripts/chromium-play.py, `<video src=index.m3u8>`) plays it to the end and
/// seeks. Every program runs under `timeout`.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct ConvertHLSTests {
    /// 6 s of 30 fps x264 (B-frames, a keyframe every second) with AAC at 48 kHz, as FLV, MP4 or Annex-B (no audio).
    static func source(_ directory: URL, _ kind: String) throws -> String {
        let path = directory.appendingPathComponent("source.\(kind)").path
        let audio = kind == "264" ? [] : ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-c:a", "aac", "-b:a", "96k"]
        let encode = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30"]
                                        + audio + ["-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "30",
                                                   "-f", kind == "264" ? "h264" : kind, "-y", path])
        try #require(encode.status == 0, "\(encode.stderr)")
        return path
    }

    /// The md5 of each audio frame FFmpeg copies out of `path` (`-c:a copy -f framemd5`).
    static func audioPackets(_ path: String) throws -> (lines: [String], errors: String) {
        let run = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-c:a", "copy", "-f", "framemd5", "-"])
        let md5s = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { line -> String? in
                // "stream, dts, pts, duration, size, md5[, side data]": MP4's priming (skip samples) adds side data to the first.
                let fields = line.split(separator: ",")
                return fields.count > 5 ? fields[5].trimmingCharacters(in: .whitespaces) : nil
            }
        return (md5s, run.stderr)
    }

    @Test(arguments: ["flv", "mp4", "264"])
    func ffmpegReadsTheConvertedPlaylistAsTheSourcesPicturesAndAudio(kind: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory, kind)
        let playlist = directory.appendingPathComponent("hls/index.m3u8").path
        let convert = try Subprocess.run("timeout", ["60", CLI.executable.path, "convert", source, "-o", playlist])
        try #require(convert.status == 0, "\(convert.stderr)")
        #expect(convert.stderr.isEmpty, "\(convert.stderr)")
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:VOD\n") && text.hasSuffix("#EXT-X-ENDLIST\n"), "\(text)")
        // A keyframe every second, 2 s segments: three of them.
        #expect(HLSConvertLines.uris(text) == ["seg-0.m4s", "seg-1.m4s", "seg-2.m4s"], "\(text)")
        let decoded = try ConvertMP4Tests.framemd5(playlist)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        let expected = try ConvertMP4Tests.framemd5(source)
        #expect(decoded.lines.count == 180 && decoded.lines == expected.lines, "\(decoded.lines.count) pictures of \(expected.lines.count)")
        guard kind != "264" else { return }
        let audio = try Self.audioPackets(playlist), sourceAudio = try Self.audioPackets(source)
        #expect(audio.errors.isEmpty, "\(audio.errors)")
        #expect(audio.lines.count > 270 && audio.lines == sourceAudio.lines, "\(audio.lines.count) AAC frames of \(sourceAudio.lines.count)")
    }

    @Test func theSegmentDurationOptionCutsAtTheFirstKeyframePastIt() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory, "flv")
        let playlist = directory.appendingPathComponent("index.m3u8").path
        let convert = try Subprocess.run("timeout", ["60", CLI.executable.path, "convert", source, "-o", playlist, "--hls-segment-duration", "1"])
        try #require(convert.status == 0, "\(convert.stderr)")
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(HLSConvertLines.uris(text).count == 6, "\(text)")
        #expect(text.contains("#EXT-X-TARGETDURATION:1\n"), "\(text)")
        // Each segment begins with a keyframe, as FFmpeg reads it.
        for uri in HLSConvertLines.uris(text) {
            let bytes = try Data(contentsOf: directory.appendingPathComponent("init-0.mp4")) + Data(contentsOf: directory.appendingPathComponent(uri))
            let joined = directory.appendingPathComponent("joined.mp4")
            try bytes.write(to: joined)
            let first = try ReceiveMP4Tests.probe(joined.path, ["-select_streams", "v", "-show_entries", "packet=flags", "-read_intervals", "%+#1"])
            #expect(first.first?.first?.hasPrefix("K") == true, "\(uri) starts with \(first)")
        }
    }

    @Test func chromiumPlaysTheConvertedPlaylistToTheEndAndSeeks() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory, "flv")
        let playlist = directory.appendingPathComponent("index.m3u8").path
        let convert = try Subprocess.run("timeout", ["60", CLI.executable.path, "convert", source, "-o", playlist])
        try #require(convert.status == 0, "\(convert.stderr)")
        let playback = try MP4BrowserPlaybackTests.play(playlist, mse: false, seek: 3)
        #expect(playback.error == nil && playback.ended, "\(playback)")
        #expect(abs(playback.duration - 6) < 0.1, "duration \(playback.duration)")
        #expect(playback.decodedFrames >= 170, "\(playback.decodedFrames) frames decoded")
        #expect(abs((playback.seekedTo ?? 0) - 3) < 0.1, "seeked to \(playback.seekedTo ?? -1)")
    }

    @Test func anHLSOutputMustBeAPlaylistFile() throws {
        let run = try Subprocess.run("timeout", ["30", CLI.executable.path, "convert", "in.flv", "--to", "hls", "-o", "-"])
        #expect(run.status != 0 && run.stderr.contains("-o DIR/index.m3u8"), "\(run.stderr)")
    }
}

/// Reading a playlist's lines in the CLI tests.
enum HLSConvertLines {
    /// The URIs a playlist lists (its lines that are not tags).
    static func uris(_ text: String) -> [String] { text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init) }
}
