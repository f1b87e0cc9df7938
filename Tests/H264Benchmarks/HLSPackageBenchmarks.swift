import Foundation
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

extension AllBenchmarks {
/// `hls_package_cpu_vs_ffmpeg`: the same FLV file (``MP4BenchmarkInput``: 60 s of 1080p H.264
/// at 6 Mbit/s with B-frames, and AAC) packaged into HLS VOD — fMP4 segments cut at keyframes
/// past 2 s beside a VOD playlist — by two processes: `h264 convert IN.flv -o DIR/index.m3u8`
/// (`HLSDirectoryWriter`) against `ffmpeg -i IN.flv -c copy -f hls -hls_segment_type fmp4
/// -hls_time 2 -hls_playlist_type vod DIR/index.m3u8`. CPU time (user + system) of each
/// process, runs interleaved (ABBA) after an untimed one of each, both directories emptied
/// (untimed) before each run. Checked first: both playlists list the same number of segments,
/// and their initialization segment followed by their segments holds the same samples (count,
/// sizes and bytes) in both.
@Suite("HLSPackage")
struct HLSPackageBenchmarks {
    static func ours(_ input: String, _ directory: String) -> [String] {
        [ServeProcess.h264Executable.path, "convert", input, "-o", directory + "/index.m3u8"]
    }

    static func ffmpeg(_ input: String, _ directory: String) -> [String] {
        ["ffmpeg", "-nostdin", "-v", "error", "-i", input, "-c", "copy", "-f", "hls", "-hls_segment_type", "fmp4", "-hls_time", "2",
         "-hls_playlist_type", "vod", "-y", directory + "/index.m3u8"]
    }

    /// The segments `directory/index.m3u8` lists, joined behind its first `EXT-X-MAP` into one
    /// fragmented MP4 file (`joined.mp4` in the directory); returns its path and the segment count.
    static func joined(_ directory: String) throws -> (path: String, segments: Int) {
        let text = try String(contentsOfFile: directory + "/index.m3u8", encoding: .utf8)
        let lines = text.split(separator: "\n")
        let map = try #require(lines.first { $0.hasPrefix("#EXT-X-MAP:URI=\"") }.map { $0.dropFirst(16).prefix { $0 != "\"" } })
        let uris = lines.filter { !$0.hasPrefix("#") }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + map))
        for uri in uris { bytes += try Data(contentsOf: URL(fileURLWithPath: directory + "/" + uri)) }
        let path = directory + "/joined.mp4"
        try bytes.write(to: URL(fileURLWithPath: path))
        return (path, uris.count)
    }

    /// Empties `directory` (creating it when missing).
    static func empty(_ directory: String) throws {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    @Test(.timeLimit(.minutes(10))) func packageVersusFFmpeg() throws {
        let input = try MP4BenchmarkInput.flv()
        let ourDirectory = MP4BenchmarkInput.path("hls-ours"), theirDirectory = MP4BenchmarkInput.path("hls-ffmpeg")
        defer {
            try? FileManager.default.removeItem(atPath: ourDirectory)
            try? FileManager.default.removeItem(atPath: theirDirectory)
        }
        // The same work: as many segments, and the same samples in both.
        try Self.empty(ourDirectory)
        try Self.empty(theirDirectory)
        _ = try MP4BenchmarkInput.timed(Self.ours(input, ourDirectory))
        _ = try MP4BenchmarkInput.timed(Self.ffmpeg(input, theirDirectory))
        let ourJoined = try Self.joined(ourDirectory), theirJoined = try Self.joined(theirDirectory)
        let ourSummary = try MP4WriteBenchmarks.summary(ourJoined.path), theirSummary = try MP4WriteBenchmarks.summary(theirJoined.path)
        #expect(ourJoined.segments == theirJoined.segments, "segments: ours \(ourJoined.segments), ffmpeg's \(theirJoined.segments)")
        #expect(ourSummary == theirSummary, "ours: \(ourSummary); ffmpeg: \(theirSummary)")
        #expect(ourSummary.tracks["vide"]?.count == MP4BenchmarkInput.seconds * MP4BenchmarkInput.framesPerSecond)
        #expect((ourSummary.tracks["soun"]?.count ?? 0) >= MP4BenchmarkInput.seconds * 46)

        let runs = try MP4BenchmarkInput.interleave(
            ours: Self.ours(input, ourDirectory), theirs: Self.ffmpeg(input, theirDirectory),
            setUp: {
                try Self.empty(ourDirectory)
                try Self.empty(theirDirectory)
            })
        let ratio = Bench.pairedRatio(runs.ours.map(\.cpu), runs.theirs.map(\.cpu))
        BenchmarkReport.shared.record(
            "hls_package_cpu_vs_ffmpeg", ratio, goal: "≤ 0.5",
            detail: "CPU time (user + system) ours ÷ ffmpeg's, median of \(Bench.runs) paired runs (ABBA); \(MP4BenchmarkInput.seconds) s 1080p H.264 + AAC "
                + "FLV (\(ourSummary)) to HLS VOD, \(ourJoined.segments) fMP4 segments of 2 s: h264 convert -o DIR/index.m3u8 "
                + MP4BenchmarkInput.summary(runs.ours) + "; ffmpeg -c copy -f hls -hls_segment_type fmp4 -hls_time 2 -hls_playlist_type vod "
                + MP4BenchmarkInput.summary(runs.theirs))
    }
}
}
