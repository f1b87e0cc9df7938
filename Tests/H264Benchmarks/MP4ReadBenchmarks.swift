import Foundation
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

extension AllBenchmarks {
/// `mp4_read_cpu_vs_ffmpeg`: one MP4 file — FFmpeg's faststart remux of ``MP4BenchmarkInput``
/// (60 s of 1080p H.264 at 6 Mbit/s with B-frames, and AAC; the x264 + FFmpeg file people
/// have) — demuxed to compressed frames by two processes: `h264 convert X.mp4 --to annexb -o
/// /dev/null` (`MP4Reader`: every sample of both tracks read; the video samples rewritten to
/// Annex-B with the parameter sets before each keyframe, written to /dev/null) against
/// `ffmpeg -i X.mp4 -c copy -f null -` (every packet of both tracks read and handed to the null
/// muxer). No CLI form of ours only reads and discards: the conversion to Annex-B is more work
/// than FFmpeg's null muxer does. CPU time (user + system) of each process, runs interleaved
/// (ABBA) after an untimed one of each. Checked first: our Annex-B has the same slices, in
/// order, as FFmpeg's `h264_mp4toannexb` of the file.
@Suite("MP4Read")
struct MP4ReadBenchmarks {
    static func ours(_ input: String, _ output: String) -> [String] {
        [ServeProcess.h264Executable.path, "convert", input, "--to", "annexb", "-o", output]
    }

    static func ffmpeg(_ input: String) -> [String] {
        ["ffmpeg", "-nostdin", "-v", "error", "-i", input, "-c", "copy", "-f", "null", "-"]
    }

    /// The slices (NAL unit types 1 and 5) of an Annex-B file, in order.
    static func slices(_ path: String) throws -> [ArraySlice<UInt8>] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return AnnexB.nalUnits(in: bytes).map { bytes[$0.range] }.filter { [1, 5].contains($0.first! & 0x1F) }
    }

    @Test(.timeLimit(.minutes(10))) func readVersusFFmpeg() throws {
        let flv = try MP4BenchmarkInput.flv()
        let input = MP4BenchmarkInput.path("read-input.mp4")
        let ourAnnexB = MP4BenchmarkInput.path("read-ours.264"), theirAnnexB = MP4BenchmarkInput.path("read-ffmpeg.264")
        defer {
            for path in [input, ourAnnexB, theirAnnexB] { try? FileManager.default.removeItem(atPath: path) }
        }
        _ = try MP4BenchmarkInput.timed(["ffmpeg", "-nostdin", "-v", "error", "-i", flv, "-c", "copy", "-movflags", "+faststart", "-y", input])
        let reader = try MP4Reader(source: try MP4FileSource(path: input))
        let samples = reader.tracks.map { "\($0.handlerType): \($0.samples.count)" }.joined(separator: ", ")
        let videoSamples = reader.tracks.first { $0.handlerType == "vide" }?.samples.count ?? 0
        #expect(videoSamples == MP4BenchmarkInput.seconds * MP4BenchmarkInput.framesPerSecond)
        // The same frames out of both.
        _ = try MP4BenchmarkInput.timed(Self.ours(input, ourAnnexB))
        _ = try MP4BenchmarkInput.timed(["ffmpeg", "-nostdin", "-v", "error", "-i", input, "-map", "0:v", "-c", "copy",
                                         "-bsf:v", "h264_mp4toannexb", "-f", "h264", "-y", theirAnnexB])
        let ourSlices = try Self.slices(ourAnnexB), theirSlices = try Self.slices(theirAnnexB)
        #expect(ourSlices.count >= videoSamples && ourSlices == theirSlices, "\(ourSlices.count) slices, FFmpeg's \(theirSlices.count)")
        let inputBytes = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? 0

        let runs = try MP4BenchmarkInput.interleave(ours: Self.ours(input, "/dev/null"), theirs: Self.ffmpeg(input))
        let ratio = Bench.pairedRatio(runs.ours.map(\.cpu), runs.theirs.map(\.cpu))
        BenchmarkReport.shared.record(
            "mp4_read_cpu_vs_ffmpeg", ratio, goal: "≤ 0.5",
            detail: "CPU time (user + system) ours ÷ ffmpeg's, median of \(Bench.runs) paired runs (ABBA); a \(inputBytes)-byte faststart MP4 "
                + "(\(samples) samples) read whole: h264 convert --to annexb -o /dev/null " + MP4BenchmarkInput.summary(runs.ours)
                + "; ffmpeg -c copy -f null " + MP4BenchmarkInput.summary(runs.theirs))

        // The same work on both sides: the video as Annex-B (h264_mp4toannexb) to /dev/null.
        let same = try MP4BenchmarkInput.interleave(ours: Self.ours(input, "/dev/null"), theirs: Self.ffmpegAnnexB(input))
        BenchmarkReport.shared.record(
            "mp4_read_annexb_cpu_vs_ffmpeg", Bench.pairedRatio(same.ours.map(\.cpu), same.theirs.map(\.cpu)), goal: "≤ 0.5",
            detail: "CPU time ours ÷ ffmpeg's, median of \(Bench.runs) paired runs (ABBA), both writing the file's video as Annex-B to "
                + "/dev/null: h264 convert --to annexb " + MP4BenchmarkInput.summary(same.ours)
                + "; ffmpeg -map 0:v -c copy -bsf:v h264_mp4toannexb -f h264 " + MP4BenchmarkInput.summary(same.theirs))
    }

    /// FFmpeg doing what ours does: the video track to Annex-B (`h264_mp4toannexb`), to /dev/null.
    static func ffmpegAnnexB(_ input: String) -> [String] {
        ["ffmpeg", "-nostdin", "-v", "error", "-i", input, "-map", "0:v", "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", "-y", "/dev/null"]
    }
}
}
