import Foundation
import H264TestSupport
@testable import MediaContainers
import MediaCore
import Testing

/// `HLSDirectoryWriter` (issue 37, HLS on disk): each segment's file written when it completes,
/// the playlist rewritten after it (an event while it grows, VOD at the end, never a temporary
/// file left), and a window that deletes the files leaving it. FFmpeg reads what `h264 convert
/// -o DIR/index.m3u8` writes in H264CLITests' `ConvertHLSTests`.
@Suite struct HLSDirectoryWriterTests {
    /// The top-level box types of the file at `path`.
    static func boxes(_ path: String) throws -> [String] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var types: [String] = [], offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            types.append(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self))
            guard size >= 8 else { break }
            offset += size
        }
        return types
    }

    /// The URIs a playlist lists (its lines that are not tags).
    static func uris(_ text: String) -> [String] { text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init) }

    /// 30 fps video with AAC, frames `range`, each into `writer`.
    static func feed(_ writer: inout HLSDirectoryWriter, _ range: Range<Int>, format: MediaFormatDescription) throws {
        var nextAudio = Int((Double(range.lowerBound) / 30 * 48_000 / 1024).rounded(.up))
        for index in range {
            let frame = HLSPackagerTests.video(index, format)
            while HLSPackagerTests.audio(nextAudio).presentationTime <= frame.decodeTime {
                try writer.append(HLSPackagerTests.audio(nextAudio))
                nextAudio += 1
            }
            try writer.append(frame)
        }
    }

    @Test func aGrowingEventBecomesVODWithEveryFileItListsWrittenBesideIt() throws {
        let directory = try MP4RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let format = try MP4RecorderTests.formats().0
        var writer = try HLSDirectoryWriter(.init(directory: directory.path + "/hls"))
        let playlist = directory.path + "/hls/index.m3u8"
        try Self.feed(&writer, 0..<150, format: format)  // 5 s: two 2 s segments complete
        let growing = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(growing.contains("#EXT-X-PLAYLIST-TYPE:EVENT\n") && !growing.contains("#EXT-X-ENDLIST"))
        #expect(!growing.contains("SERVER-CONTROL") && !growing.contains("PROGRAM-DATE-TIME"), "\(growing)")
        #expect(Self.uris(growing) == ["seg-0.m4s", "seg-1.m4s"])
        try Self.feed(&writer, 150..<300, format: format)  // 10 s
        try writer.finish()
        let ended = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(ended.contains("#EXT-X-PLAYLIST-TYPE:VOD\n") && ended.hasSuffix("#EXT-X-ENDLIST\n"), "\(ended)")
        #expect(ended.contains("#EXT-X-MAP:URI=\"init-0.mp4\"\n"))
        #expect(Self.uris(ended) == (0..<5).map { "seg-\($0).m4s" })
        #expect(HLSPackagerTests.lines(ended, "#EXTINF:") == Array(repeating: "#EXTINF:2.000,", count: 5))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/hls").sorted()
        #expect(files == ["index.m3u8", "init-0.mp4"] + (0..<5).map { "seg-\($0).m4s" }, "no temporary file left: \(files)")
        #expect(try Self.boxes(directory.path + "/hls/init-0.mp4") == ["ftyp", "moov"])
        for index in 0..<5 { #expect(try Self.boxes(directory.path + "/hls/seg-\(index).m4s") == ["moof", "mdat"]) }
        #expect(writer.segmentCount == 5)
    }

    @Test func aWindowListsItsLastSegmentsAndDeletesTheFilesOfThoseTwoBeyondIt() throws {
        let directory = try MP4RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let format = try MP4RecorderTests.formats().0
        var writer = try HLSDirectoryWriter(.init(directory: directory.path, playlistName: "live.m3u8", windowSegments: 3))
        try Self.feed(&writer, 0..<600, format: format)  // 20 s: 9 segments complete
        let text = try String(contentsOfFile: directory.path + "/live.m3u8", encoding: .utf8)
        #expect(Self.uris(text) == ["seg-6.m4s", "seg-7.m4s", "seg-8.m4s"])
        #expect(text.contains("#EXT-X-MEDIA-SEQUENCE:6\n") && !text.contains("PLAYLIST-TYPE"), "\(text)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files == ["init-0.mp4", "live.m3u8"] + (4..<9).map { "seg-\($0).m4s" }, "\(files)")
        try writer.finish()
        let ended = try String(contentsOfFile: directory.path + "/live.m3u8", encoding: .utf8)
        #expect(ended.hasSuffix("#EXT-X-ENDLIST\n") && !ended.contains("PLAYLIST-TYPE"), "\(ended)")
    }

    @Test func aWallClockGivesEachSegmentItsDate() throws {
        let directory = try MP4RecorderTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let format = try MP4RecorderTests.formats().0
        var writer = try HLSDirectoryWriter(.init(directory: directory.path))
        for index in 0..<90 {
            let frame = HLSPackagerTests.video(index, format)
            try writer.append(frame, wallClock: HLSPackagerTests.wallClock + frame.decodeTime)
        }
        try writer.finish()
        let text = try String(contentsOfFile: directory.path + "/index.m3u8", encoding: .utf8)
        #expect(HLSPackagerTests.lines(text, "#EXT-X-PROGRAM-DATE-TIME:").first == "#EXT-X-PROGRAM-DATE-TIME:2026-11-30T00:53:30.000Z")
    }
}
