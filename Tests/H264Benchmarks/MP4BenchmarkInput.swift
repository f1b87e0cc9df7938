import Foundation
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The input of the MP4 benchmarks (`mp4_write_cpu_vs_ffmpeg`, `mp4_read_cpu_vs_ffmpeg`,
/// `mp4_recorder_rss_growth_mb`): 1920×1080 at 30 fps, FFmpeg's `testsrc2` encoded by libx264
/// veryfast at 6 Mbit/s (an IDR every 2 s, 3 B-frames), a 10-second clip looped by FFmpeg
/// (`-stream_loop`, `-c:v copy`) to ``seconds`` with a 48 kHz stereo AAC-LC tone at 128 kbit/s
/// (FFmpeg's `aac`), in FLV — the form `h264 convert` reads with its audio. Made once per test
/// process; removed when it exits.
enum MP4BenchmarkInput {
    static let clipSeconds = Bench.isDebugBuild ? 2 : 10
    static let seconds = Bench.isDebugBuild ? 4 : 60
    static let framesPerSecond = 30

    /// The FLV file (H.264 + AAC).
    static func flv() throws -> String { try made.get() }

    /// The directory of the input and of the benchmarks' outputs.
    static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-mp4-bench-\(getpid())")

    private static let made = Result<String, any Error>(catching: { try make() })

    private static func make() throws -> String {
        atexit { try? FileManager.default.removeItem(at: MP4BenchmarkInput.directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let clip = path("clip.mkv"), flv = path("input1080p.flv")
        let encoded = try Subprocess.run("timeout", ["300", "ffmpeg",
            "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=\(framesPerSecond)", "-t", "\(clipSeconds)",
            "-c:v", "libx264", "-preset", "veryfast", "-b:v", "6M", "-maxrate", "6M", "-bufsize", "12M", "-g", "60", "-bf", "3",
            "-pix_fmt", "yuv420p", "-f", "matroska", "-y", clip])
        try #require(encoded.status == 0, "ffmpeg: \(encoded.stderr)")
        let loops = (seconds + clipSeconds - 1) / clipSeconds - 1
        let muxed = try Subprocess.run("timeout", ["120", "ffmpeg",
            "-nostdin", "-loglevel", "error", "-stream_loop", "\(loops)", "-i", clip,
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-map", "0:v", "-map", "1:a", "-t", "\(seconds)",
            "-c:v", "copy", "-c:a", "aac", "-b:a", "128k", "-ac", "2", "-f", "flv", "-y", flv])
        try #require(muxed.status == 0, "ffmpeg: \(muxed.stderr)")
        try? FileManager.default.removeItem(atPath: clip)
        return flv
    }

    /// A path in ``directory``.
    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// One run of a process: its wall seconds and CPU seconds (user + system).
    struct Run {
        var wall: Double
        var user: Double
        var system: Double
        var cpu: Double { user + system }
    }

    /// Runs `arguments[0]` with the rest under `timeout 120` (standard output and error to
    /// /dev/null, standard error shown on failure): wall seconds from launch to exit and the CPU
    /// time of the reaped children (`RUSAGE_CHILDREN`: `timeout` and the program it waited for).
    static func timed(_ arguments: [String]) throws -> Run {
        let before = childrenUsage()
        let start = Bench.now()
        let result = try Subprocess.run("timeout", ["120"] + arguments)
        let wall = Double(Bench.now() - start) / 1e9
        let after = childrenUsage()
        try #require(result.status == 0, "\(arguments.joined(separator: " ")): status \(result.status) \(result.stderr)")
        return Run(wall: wall, user: after.user - before.user, system: after.system - before.system)
    }

    /// User and system seconds of this process's reaped children so far.
    static func childrenUsage() -> (user: Double, system: Double) {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return (Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
                Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6)
    }

    /// Runs `ours` and `theirs` one after the other, alternating which goes first (ABBA), after
    /// one untimed run of each; `setUp` (untimed) before every run. Returns the timed runs.
    static func interleave(ours: [String], theirs: [String], setUp: () throws -> Void = {}) throws -> (ours: [Run], theirs: [Run]) {
        var ourRuns: [Run] = [], theirRuns: [Run] = []
        for _ in 0..<Bench.warmUpRuns {
            try setUp(); _ = try timed(ours)
            try setUp(); _ = try timed(theirs)
        }
        for run in 0..<Bench.runs {
            for step in 0..<2 {
                try setUp()
                if (run + step) % 2 == 0 { ourRuns.append(try timed(ours)) } else { theirRuns.append(try timed(theirs)) }
            }
        }
        return (ourRuns, theirRuns)
    }

    /// "median 41 ms CPU (user 30 + system 11; 38–47), 120 ms wall" of some runs.
    static func summary(_ runs: [Run]) -> String {
        let cpu = runs.map(\.cpu)
        return String(format: "median %.1f ms CPU (user %.1f + system %.1f; %.1f–%.1f), %.0f ms wall",
                      Bench.median(cpu) * 1e3, Bench.median(runs.map(\.user)) * 1e3, Bench.median(runs.map(\.system)) * 1e3,
                      (cpu.min() ?? .nan) * 1e3, (cpu.max() ?? .nan) * 1e3, Bench.median(runs.map(\.wall)) * 1e3)
    }
}
