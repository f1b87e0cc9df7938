import Foundation
import H264TestSupport
@testable import MediaContainers
import MediaCore
import Testing

/// `MP4Recorder.Configuration.vodPlaylist` (issue 37, recordings as VOD): the recorder's files
/// left fragmented and listed by byte range — each file's `EXT-X-MAP` its `ftyp` + `moov`, its
/// segments runs of whole fragments from a keyframe that tile the rest of the file — an event
/// while it records, VOD at the end, a discontinuity where the format changes. FFmpeg and
/// Chromium play a recorded playlist in H264CLITests' `RecordVODPlaylistTests`.
@Suite struct MP4RecorderVODPlaylistTests {
    /// A playlist's files in order, each with its map's byte range and its segments' (size, offset, duration).
    static func parse(_ text: String) -> [(uri: String, map: String, segments: [(size: Int, offset: Int, duration: Double)])] {
        var files: [(uri: String, map: String, segments: [(size: Int, offset: Int, duration: Double)])] = []
        var duration = 0.0, range = (0, 0)
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#EXT-X-MAP:") {
                let uri = HLSPackagerTests.attribute("URI", line) ?? "", map = HLSPackagerTests.attribute("BYTERANGE", line) ?? ""
                files.append((uri, map, []))
            } else if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst(8).dropLast()) ?? 0
            } else if line.hasPrefix("#EXT-X-BYTERANGE:") {
                let parts = line.dropFirst(17).split(separator: "@")
                range = (Int(parts[0]) ?? 0, Int(parts[1]) ?? 0)
            } else if !line.hasPrefix("#"), !files.isEmpty, files[files.count - 1].uri == line {
                files[files.count - 1].segments.append((range.0, range.1, duration))
            }
        }
        return files
    }

    @Test func everyFileIsListedByByteRangesThatTileItFromKeyframeToKeyframe() throws {
        let directory = try MP4RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (format, _) = try MP4RecorderTests.formats()
        var configuration = MP4Recorder.Configuration(path: directory.path + "/rec-%03d.mp4", segmentDuration: .seconds(4))
        configuration.vodPlaylist = directory.path + "/rec.m3u8"
        var recorder = MP4Recorder(configuration)
        // 10 s at 25 fps, a keyframe every 0.6 s (500 ms fragments cut each GOP in two): files begin at 4.2 s and 8.4 s.
        for index in 0..<125 { try recorder.write(MP4RecorderTests.video(index, format, gop: 15)) }
        let growing = try String(contentsOfFile: directory.path + "/rec.m3u8", encoding: .utf8)
        #expect(growing.contains("#EXT-X-PLAYLIST-TYPE:EVENT\n") && !growing.contains("#EXT-X-ENDLIST"), "\(growing)")
        #expect(Self.parse(growing).map(\.uri) == ["rec-001.mp4"])
        for index in 125..<250 { try recorder.write(MP4RecorderTests.video(index, format, gop: 15)) }
        try recorder.finish()
        let text = try String(contentsOfFile: directory.path + "/rec.m3u8", encoding: .utf8)
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:VOD\n") && text.hasSuffix("#EXT-X-ENDLIST\n"), "\(text)")
        #expect(text.contains("#EXT-X-INDEPENDENT-SEGMENTS\n") && !text.contains("#EXT-X-DISCONTINUITY\n"), "\(text)")
        let files = Self.parse(text)
        #expect(files.map(\.uri) == ["rec-001.mp4", "rec-002.mp4", "rec-003.mp4"])
        var total = 0.0
        for file in files {
            let path = directory.path + "/" + file.uri
            // Left fragmented: the map is ftyp + moov, and the segments tile the rest to the file's end.
            #expect(try HLSDirectoryWriterTests.boxes(path).prefix(3) == ["ftyp", "moov", "moof"])
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            let mapSize = try #require(file.map.split(separator: "@").first.flatMap { Int($0) })
            #expect(file.map.hasSuffix("@0"))
            var offset = mapSize
            for segment in file.segments {
                #expect(segment.offset == offset)
                offset += segment.size
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))[segment.offset..<segment.offset + segment.size])
                // A segment begins with a keyframe: its first video sample (6 bytes after the moof) is an IDR.
                let moofSize = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
                #expect(bytes[moofSize + 8 + 4] == 0x65, "\(file.uri) @\(segment.offset)")
                total += segment.duration
            }
            #expect(offset == size, "\(file.uri): the segments end at \(offset) of \(size)")
        }
        // Whole GOPs (two fragments each, 0.52 s + 0.08 s) until a segment lasts 2 s: 2.4 s, then the file's last 1.8 s.
        #expect(files.map { $0.segments.map(\.duration) } == [[2.4, 1.8], [2.4, 1.8], [1.6]])
        #expect(abs(total - 10) < 0.001, "\(total) s listed")
    }

    @Test func aFormatChangeBringsADiscontinuityAndItsOwnMap() throws {
        let directory = try MP4RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (first, second) = try MP4RecorderTests.formats()
        var configuration = MP4Recorder.Configuration(path: directory.path + "/rec-%03d.mp4", segmentDuration: .seconds(60))
        configuration.vodPlaylist = directory.path + "/rec.m3u8"
        var recorder = MP4Recorder(configuration)
        for index in 0..<50 { try recorder.write(MP4RecorderTests.video(index, first)) }
        for index in 50..<100 { try recorder.write(MP4RecorderTests.video(index, second)) }
        try recorder.finish()
        let text = try String(contentsOfFile: directory.path + "/rec.m3u8", encoding: .utf8)
        let lines = text.split(separator: "\n")
        let discontinuity = try #require(lines.firstIndex(of: "#EXT-X-DISCONTINUITY"))
        #expect(lines[discontinuity + 1].hasPrefix("#EXT-X-MAP:URI=\"rec-002.mp4\""), "\(text)")
        #expect(lines.filter { $0 == "#EXT-X-DISCONTINUITY" }.count == 1)
    }

    @Test func withoutAPlaylistTheFilesAreFinalisedAsBefore() throws {
        let directory = try MP4RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (format, _) = try MP4RecorderTests.formats()
        var recorder = MP4Recorder(.init(path: directory.path + "/rec.mp4"))
        for index in 0..<50 { try recorder.write(MP4RecorderTests.video(index, format)) }
        try recorder.finish()
        #expect(try HLSDirectoryWriterTests.boxes(directory.path + "/rec.mp4") == ["ftyp", "moov", "mdat"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["rec.mp4"])
    }
}
