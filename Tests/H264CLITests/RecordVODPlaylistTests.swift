import Foundation
import H264TestSupport
import Testing

/// Recordings as VOD (issue 37): `h264 relay FILE -o 'rec-%03d.mp4' --segment-duration 2
/// --vod-playlist rec.m3u8` leaves the files fragmented and lists their fragments by byte range;
/// FFmpeg reads the playlist with no error line and decodes every picture of the source, and
/// headless Chromium (Scripts/chromium-play.py, `<video src=rec.m3u8>` from a page of the same
/// origin) plays it across the files to the end and seeks into the second file. Every program
/// runs under `timeout`.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct RecordVODPlaylistTests {
    @Test func aSegmentedRecordingsPlaylistPlaysInFFmpegAndChromiumAsTheSource() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try RecordMP4Tests.fiveSeconds(in: directory)
        let pattern = directory.appendingPathComponent("rec-%03d.mp4").path
        let playlist = directory.appendingPathComponent("rec.m3u8").path
        let relay = try Subprocess.run("timeout", ["60", CLI.executable.path, "relay", source, "-o", pattern, "--segment-duration", "2",
                                                  "--vod-playlist", playlist])
        #expect(relay.status == 0, "\(relay.stderr)")
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:VOD\n") && text.hasSuffix("#EXT-X-ENDLIST\n"), "\(text)")
        #expect(text.contains("#EXT-X-INDEPENDENT-SEGMENTS\n"), "\(text)")
        let maps = text.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-MAP:") }
        #expect(maps.count == 3 && maps.allSatisfy { $0.contains(",BYTERANGE=\"") }, "\(maps)")
        #expect(Set(HLSConvertLines.uris(text)) == ["rec-001.mp4", "rec-002.mp4", "rec-003.mp4"], "\(text)")
        #expect(try ReceiveMP4Tests.topLevelBoxes(directory.appendingPathComponent("rec-002.mp4").path).prefix(3) == ["ftyp", "moov", "moof"])
        let decoded = try ConvertMP4Tests.framemd5(playlist)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        let expected = try ConvertMP4Tests.framemd5(source)
        #expect(decoded.lines.count == 150 && decoded.lines == expected.lines, "\(decoded.lines.count) pictures of \(expected.lines.count)")
        let playback = try MP4BrowserPlaybackTests.play(playlist, mse: false, seek: 3)
        #expect(playback.error == nil && playback.ended, "\(playback)")
        #expect(abs(playback.duration - 5) < 0.1, "duration \(playback.duration)")
        #expect(playback.decodedFrames >= 140, "\(playback.decodedFrames) frames decoded")
        #expect(abs((playback.seekedTo ?? 0) - 3) < 0.1, "seeked to \(playback.seekedTo ?? -1)")
    }

    @Test func aVODPlaylistNeedsAnMP4OutputAndAnM3U8Name() throws {
        let relay = try Subprocess.run("timeout", ["30", CLI.executable.path, "relay", "in.264", "-o", "rec.mp4", "--vod-playlist", "rec.txt"])
        #expect(relay.status != 0 && relay.stderr.contains("FILE.m3u8"), "\(relay.stderr)")
        let receive = try Subprocess.run("timeout", ["30", CLI.executable.path, "receive", "rtsp://127.0.0.1:1/x", "-o", "out.264", "--vod-playlist", "rec.m3u8"])
        #expect(receive.status != 0 && receive.stderr.contains("-o FILE.mp4"), "\(receive.stderr)")
    }
}
