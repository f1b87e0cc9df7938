import Foundation
import H264
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension AllBenchmarks {
/// `h264 decode FILE.264 -o - --quiet` against `ffmpeg -v error -i FILE.264 -f yuv4mpegpipe -`,
/// both writing y4m to /dev/null (standard output), both with their automatic thread count, on
/// the same 1280×720 stream (FFmpeg's `testsrc2`, libx264 veryfast, 4 Mbit/s, B-frames).
/// First, once, both write y4m files and every frame's planes are asserted equal (the headers
/// differ in their tags); then the processes are timed, runs interleaved and paired (ABBA), one
/// untimed warm-up each: wall seconds from launch to exit, and CPU seconds (user + system, of
/// the reaped child, `RUSAGE_CHILDREN`) for the detail.
@Suite("DecodeCLI")
struct DecodeCLIBenchmarks {
    static let frames = Bench.isDebugBuild ? 30 : 150

    /// The stream, made once per test process.
    static func stream(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("decode720p.264").path
        let encoded = try Subprocess.run("ffmpeg", [
            "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-frames:v", "\(frames)",
            "-c:v", "libx264", "-preset", "veryfast", "-b:v", "4M", "-pix_fmt", "yuv420p", "-f", "h264", "-y", path,
        ])
        try #require(encoded.status == 0, "ffmpeg: \(encoded.stderr)")
        return path
    }

    static func ours(_ input: String, output: String) -> (String, [String]) {
        (ServeProcess.h264Executable.path, ["decode", input, "-o", output, "--quiet"])
    }

    static func ffmpeg(_ input: String, output: String) -> (String, [String]) {
        ("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-f", "yuv4mpegpipe", "-y", output == "-" ? "pipe:1" : output])
    }

    /// Runs `command` with standard output on /dev/null: its wall and CPU seconds.
    static func timed(_ command: (String, [String])) throws -> (wall: Double, cpu: Double) {
        let null = try #require(FileHandle(forWritingAtPath: "/dev/null"))
        defer { try? null.close() }
        let cpuBefore = childrenCPU()
        let start = Bench.now()
        let process = try Subprocess.launch(command.0, command.1, standardOutput: null, standardError: FileHandle.standardError)
        process.waitUntilExit()
        let wall = Double(Bench.now() - start) / 1e9
        #expect(process.terminationStatus == 0, "\(command.0) \(command.1)")
        return (wall, childrenCPU() - cpuBefore)
    }

    /// User + system seconds of this process's reaped children.
    static func childrenCPU() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// The frames' bytes of a y4m file (each `FRAME` line's parameters dropped).
    static func y4mFrames(_ path: String) throws -> [ArraySlice<UInt8>] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let headerEnd = try #require(bytes.firstIndex(of: 0x0A))
        let header = String(decoding: bytes[..<headerEnd], as: UTF8.self).split(separator: " ")
        let width = try #require(header.first { $0.hasPrefix("W") }.flatMap { Int($0.dropFirst()) })
        let height = try #require(header.first { $0.hasPrefix("H") }.flatMap { Int($0.dropFirst()) })
        let size = width * height * 3 / 2
        var frames: [ArraySlice<UInt8>] = []
        var index = headerEnd + 1
        while index < bytes.count {
            let lineEnd = try #require(bytes[index...].firstIndex(of: 0x0A))
            try #require(bytes[index..<lineEnd].starts(with: Array("FRAME".utf8)))
            try #require(lineEnd + 1 + size <= bytes.count, "a truncated frame in \(path)")
            frames.append(bytes[(lineEnd + 1)..<(lineEnd + 1 + size)])
            index = lineEnd + 1 + size
        }
        return frames
    }

    /// `decode_y4m_vs_ffmpeg` = the median of the paired ratios ffmpeg's wall time ÷ ours (goal
    /// ≥ 1.0: ours at least as fast).
    @Test(.timeLimit(.minutes(5))) func decodeToY4MVersusFFmpeg() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-decode-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try Self.stream(in: directory)
        // The same work: the same pictures out of both.
        let ourFile = directory.appendingPathComponent("ours.y4m").path, theirFile = directory.appendingPathComponent("ffmpeg.y4m").path
        _ = try Self.timed(Self.ours(input, output: ourFile))
        _ = try Self.timed(Self.ffmpeg(input, output: theirFile))
        let ourFrames = try Self.y4mFrames(ourFile), theirFrames = try Self.y4mFrames(theirFile)
        #expect(ourFrames.count == Self.frames && theirFrames.count == Self.frames)
        #expect(ourFrames == theirFrames, "the decoded planes differ")
        try? FileManager.default.removeItem(atPath: ourFile)
        try? FileManager.default.removeItem(atPath: theirFile)

        var ours: [(wall: Double, cpu: Double)] = [], theirs: [(wall: Double, cpu: Double)] = []
        for _ in 0..<Bench.warmUpRuns {
            _ = try Self.timed(Self.ours(input, output: "-"))
            _ = try Self.timed(Self.ffmpeg(input, output: "-"))
        }
        for run in 0..<Bench.runs {
            if run % 2 == 0 {
                ours.append(try Self.timed(Self.ours(input, output: "-")))
                theirs.append(try Self.timed(Self.ffmpeg(input, output: "-")))
            } else {
                theirs.append(try Self.timed(Self.ffmpeg(input, output: "-")))
                ours.append(try Self.timed(Self.ours(input, output: "-")))
            }
        }
        let ratio = Bench.pairedRatio(theirs.map(\.wall), ours.map(\.wall))
        let cpuRatio = Bench.pairedRatio(theirs.map(\.cpu), ours.map(\.cpu))
        func summary(_ runs: [(wall: Double, cpu: Double)]) -> String {
            String(format: "median %.0f ms wall (%.0f–%.0f), %.0f ms CPU", Bench.median(runs.map(\.wall)) * 1e3,
                   (runs.map(\.wall).min() ?? .nan) * 1e3, (runs.map(\.wall).max() ?? .nan) * 1e3, Bench.median(runs.map(\.cpu)) * 1e3)
        }
        BenchmarkReport.shared.record(
            "decode_y4m_vs_ffmpeg", ratio, goal: "≥ 1.0",
            detail: "ffmpeg's wall time ÷ ours, median of \(Bench.runs) paired runs, \(Self.frames) frames 1280x720 to y4m on /dev/null, "
                + "automatic threads, the same planes: h264 decode " + summary(ours) + "; ffmpeg -f yuv4mpegpipe " + summary(theirs)
                + String(format: "; CPU ratio (ffmpeg ÷ ours) %.3f", cpuRatio))
    }
}
}
