import Foundation
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

extension AllBenchmarks {
/// `mp4_write_cpu_vs_ffmpeg`: the same FLV file (``MP4BenchmarkInput``: 60 s of 1080p H.264 at
/// 6 Mbit/s with B-frames, and AAC) muxed to a progressive MP4 with its index at the front, by
/// two processes: `h264 convert IN.flv -o OUT.mp4` (`MP4Writer`: the media data to a temporary
/// file as it comes, then `ftyp`, `moov` and the media data copied behind them) against
/// `ffmpeg -i IN.flv -c copy -movflags +faststart OUT.mp4` (`+faststart`: FFmpeg then writes
/// the `moov` at the end and moves it to the front by rewriting the file, so both outputs have
/// the same layout and both write the media data twice). CPU time (user + system) of each
/// process, runs interleaved (ABBA) after an untimed one of each, the output removed (untimed)
/// before each run. Checked first: both files have the same tracks with the same samples (count,
/// sizes and bytes) and `moov` before `mdat`.
@Suite("MP4Write")
struct MP4WriteBenchmarks {
    static func ours(_ input: String, _ output: String) -> [String] {
        [ServeProcess.h264Executable.path, "convert", input, "-o", output]
    }

    static func ffmpeg(_ input: String, _ output: String) -> [String] {
        ["ffmpeg", "-nostdin", "-v", "error", "-i", input, "-c", "copy", "-movflags", "+faststart", "-y", output]
    }

    /// A file's tracks (by handler type): sample count, total bytes and a checksum of the
    /// samples' bytes in order; and its top-level box types.
    struct Summary: Equatable, CustomStringConvertible {
        var tracks: [String: (count: Int, bytes: Int, checksum: UInt64)]
        var topLevel: [String]

        static func == (a: Summary, b: Summary) -> Bool {
            a.tracks.keys.sorted() == b.tracks.keys.sorted()
                && a.tracks.allSatisfy { key, value in b.tracks[key].map { $0 == value } ?? false }
        }

        var description: String {
            tracks.keys.sorted().map { "\($0): \(tracks[$0]!.count) samples, \(tracks[$0]!.bytes) bytes" }.joined(separator: "; ")
        }
    }

    /// Reads `path` with `MP4Reader` (every sample's bytes, as stored).
    static func summary(_ path: String) throws -> Summary {
        let source = try MP4FileSource(path: path)
        let reader = try MP4Reader(source: source)
        var tracks: [String: (count: Int, bytes: Int, checksum: UInt64)] = [:]
        for track in reader.tracks {
            var checksum: UInt64 = 0xcbf2_9ce4_8422_2325, bytes = 0
            for sample in track.samples {
                let data = try source.read(at: sample.offset, count: sample.size)
                bytes += data.count
                for byte in data { checksum = (checksum ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
            tracks[track.handlerType.description] = (track.samples.count, bytes, checksum)
        }
        var topLevel: [String] = [], offset = 0
        while offset + 8 <= source.count {
            let header = try MP4BoxHeader(parsing: try source.read(at: offset, count: min(16, source.count - offset)),
                                          at: offset, containerEnd: source.count)
            topLevel.append(header.type.description)
            offset = header.end
        }
        return Summary(tracks: tracks, topLevel: topLevel)
    }

    @Test(.timeLimit(.minutes(10))) func writeVersusFFmpeg() throws {
        let input = try MP4BenchmarkInput.flv()
        let ourFile = MP4BenchmarkInput.path("written-ours.mp4"), theirFile = MP4BenchmarkInput.path("written-ffmpeg.mp4")
        defer {
            try? FileManager.default.removeItem(atPath: ourFile)
            try? FileManager.default.removeItem(atPath: theirFile)
        }
        // The same work: the same samples in both files, the index at the front of both.
        _ = try MP4BenchmarkInput.timed(Self.ours(input, ourFile))
        _ = try MP4BenchmarkInput.timed(Self.ffmpeg(input, theirFile))
        let ourSummary = try Self.summary(ourFile), theirSummary = try Self.summary(theirFile)
        #expect(ourSummary == theirSummary, "ours: \(ourSummary); ffmpeg: \(theirSummary)")
        #expect(ourSummary.tracks["vide"]?.count == MP4BenchmarkInput.seconds * MP4BenchmarkInput.framesPerSecond)
        #expect((ourSummary.tracks["soun"]?.count ?? 0) >= MP4BenchmarkInput.seconds * 46)
        for summary in [ourSummary, theirSummary] {
            let moov = summary.topLevel.firstIndex(of: "moov"), mdat = summary.topLevel.firstIndex(of: "mdat")
            #expect(moov != nil && mdat != nil && moov! < mdat!, "top-level boxes \(summary.topLevel)")
        }
        let outputBytes = (try? FileManager.default.attributesOfItem(atPath: ourFile)[.size] as? Int) ?? 0
        let ffmpegBytes = (try? FileManager.default.attributesOfItem(atPath: theirFile)[.size] as? Int) ?? 0

        let runs = try MP4BenchmarkInput.interleave(
            ours: Self.ours(input, ourFile), theirs: Self.ffmpeg(input, theirFile),
            setUp: {
                try? FileManager.default.removeItem(atPath: ourFile)
                try? FileManager.default.removeItem(atPath: theirFile)
            })
        let ratio = Bench.pairedRatio(runs.ours.map(\.cpu), runs.theirs.map(\.cpu))
        BenchmarkReport.shared.record(
            "mp4_write_cpu_vs_ffmpeg", ratio, goal: "≤ 0.5",
            detail: "CPU time (user + system) ours ÷ ffmpeg's, median of \(Bench.runs) paired runs (ABBA); \(MP4BenchmarkInput.seconds) s 1080p H.264 + AAC "
                + "FLV (\(ourSummary)) to a faststart MP4 (ours \(outputBytes) bytes, ffmpeg's \(ffmpegBytes)): h264 convert "
                + MP4BenchmarkInput.summary(runs.ours) + "; ffmpeg -c copy -movflags +faststart " + MP4BenchmarkInput.summary(runs.theirs))
    }
}
}
