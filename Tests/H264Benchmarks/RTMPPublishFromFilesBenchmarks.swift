import Foundation
import H264
import H264Streaming
import H264TestSupport
import NIOCore
import NIOPosix
import Testing

extension AllBenchmarks {
/// Publishing files to an RTMP server, like for like: 8 streams in this process, each reading,
/// cutting and pacing the Annex-B file inside the window as a program would
/// (`for try await frame in AnnexBFilePlayer(path:)` → `try await RTMPPublisher.send(frame)`,
/// the 8 publishers on one event-loop thread), against 8
/// `ffmpeg -nostdin -re -i FILE -c copy -f flv rtmp://…` processes, both to the same
/// nginx-rtmp (`live on`, no recording), the file ``CameraStream``'s (720p, 2 Mbit/s, 30 fps, 60 s,
/// read in the window on both sides). Windows alternate ours, theirs, theirs, ours (ABBA), each
/// side started afresh and measured once every stream has sent 30 frames (FFmpeg's probing and
/// both sides' connecting stay outside). CPU time (user + system) over the same wall-clock
/// windows: this process's (`getrusage`) against the sum of the 8 ffmpegs' (`/proc/PID/stat`).
/// Debug builds run 2 streams for one 2 s window each, as a check that every stream is published.
@Suite("RTMPPublishFromFiles")
struct RTMPPublishFromFilesBenchmarks {
    static var streams: Int { RTMPPublishBenchmarks.streams }
    static var windowSeconds: Double { RTMPPublishBenchmarks.windowSeconds }
    /// Rounds of two windows (ours then theirs, then theirs then ours, …).
    static let rounds = Bench.isDebugBuild ? 1 : 2
    /// Frames every stream has sent before the window opens.
    static let warmUpFrames = 30

    /// The file played `streams` times at once, one task each, every frame handed to
    /// `deliver(stream, frame)`; once every stream has had ``warmUpFrames`` frames, this process's
    /// CPU over one window, and how far each of `counts()` (read as the window opens and closes)
    /// moved in it. Cancelling ends each player's sequence (nil); an error of a player or of
    /// `deliver` is thrown here.
    static func playWindow(file: String, group: any EventLoopGroup, deliver: @escaping @Sendable (Int, LiveFrame) async throws -> Void,
                           counts: () -> [Int] = { [] }) async throws -> (CPUTime.Split, [Int]) {
        let (warmUps, warmed) = AsyncStream.makeStream(of: Void.self)
        let tasks = (0..<streams).map { stream in
            // Each stream is read, paced and sent on one event loop, as `h264 relay FILE` does.
            let loop = group.next()
            return Task(executorPreference: EventLoopExecutor(loop)) {
                var played = 0
                defer { if played < warmUpFrames { warmed.yield() } } // ended early: the counts and the error show it
                for try await frame in AnnexBFilePlayer(path: file, eventLoop: loop) {
                    try await deliver(stream, frame)
                    played += 1
                    if played == warmUpFrames { warmed.yield() }
                }
            }
        }
        var ready = 0
        for await _ in warmUps {
            ready += 1
            if ready == streams { break }
        }
        let before = counts(), cpuBefore = CPUTime.splitOfThisProcess()
        try await Task.sleep(for: .seconds(windowSeconds))
        let cpu = CPUTime.splitOfThisProcess() - cpuBefore
        let moved = zip(counts(), before).map { $0 - $1 }
        for task in tasks { task.cancel() }
        for task in tasks { try await task.value }
        return (cpu, moved)
    }

    /// `streams` files played and published from this process, one task each; the CPU of the
    /// window and the frames each publisher sent in it.
    static func ours(nginx: NginxRTMPServer, file: String, key: String) async throws -> (CPUTime.Split, [Int]) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var connected: [RTMPPublisher] = []
        for index in 0..<streams {
            connected.append(try await RTMPPublisher.connect(to: nginx.url(key: "\(key)\(index)"), group: group))
        }
        let publishers = connected
        let window = try await playWindow(file: file, group: group, deliver: { try await publishers[$0].send($1) },
                                          counts: { publishers.map(\.statistics.framesSent) })
        for publisher in publishers {
            #expect(publisher.statistics.framesDropped == 0, "\(publisher.statistics)")
            await publisher.finish()
        }
        try await group.shutdownGracefully()
        return window
    }

    /// The same `streams` players with nothing published (each frame dropped as it comes): the
    /// CPU of reading, cutting and pacing alone over one window, after the same warm-up.
    static func playersOnly(file: String) async throws -> CPUTime.Split {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let cpu = try await playWindow(file: file, group: group, deliver: { _, _ in }).0
        try await group.shutdownGracefully()
        return cpu
    }

    /// `rtmp_publish_from_files_cpu_vs_ffmpeg` = our CPU seconds ÷ the 8 ffmpegs' over the same
    /// windows; `rtmp_publish_from_files_player_share` = the CPU of the 8 players alone (one more
    /// window, nothing published) ÷ ours per window: how much of ours is reading, cutting and pacing.
    @Test(.timeLimit(.minutes(5))) func publishFromFilesCPUVersusFFmpeg() async throws {
        let camera = try CameraStream.files()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-rtmp-files-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try RTMPPublishBenchmarks.nginx(in: directory)
        defer { nginx.kill() }
        var ours: [(CPUTime.Split, [Int])] = [], theirs: [(CPUTime.Split, [Int])] = []
        for round in 0..<Self.rounds {
            for side in round % 2 == 0 ? [0, 1] : [1, 0] {
                if side == 0 {
                    ours.append(try await Self.ours(nginx: nginx, file: camera.annexB, key: "files\(round)-"))
                } else {
                    theirs.append(try await RTMPPublishBenchmarks.ffmpegs(nginx: nginx, file: camera.annexB, directory: directory,
                                                                          key: "ffmpeg\(round)-", inputOptions: []))
                }
            }
        }
        // Every stream at the source rate in every window on both sides, no fewer frames and no
        // more (ffmpeg's counts are sampled every 0.5 s: 15 frames of slack).
        let expected = Bench.framesPerWindow(seconds: Self.windowSeconds), sampled = Bench.framesPerWindow(seconds: Self.windowSeconds, slack: 15)
        for (_, frames) in ours {
            #expect(frames.count == Self.streams && frames.allSatisfy(expected.contains), "frames per stream (\(expected)): \(frames)")
        }
        for (_, frames) in theirs {
            #expect(frames.count == Self.streams && frames.allSatisfy(sampled.contains), "ffmpeg's frames per stream (\(sampled)): \(frames)")
        }
        let players = try await Self.playersOnly(file: camera.annexB)
        let ourCPU = ours.reduce(0) { $0 + $1.0.total }, theirCPU = theirs.reduce(0) { $0 + $1.0.total }
        let seconds = Self.windowSeconds * Double(Self.rounds)
        func cpu(_ windows: [(CPUTime.Split, [Int])]) -> String {
            let frames = windows.flatMap(\.1)
            return CPUTime.Split.describe(windows.map(\.0), over: seconds) + ", frames per stream and window "
                + "\(frames.min() ?? 0)–\(frames.max() ?? 0)"
        }
        BenchmarkReport.shared.record(
            "rtmp_publish_from_files_cpu_vs_ffmpeg", ourCPU / theirCPU, goal: "≤ 0.5",
            detail: "\(Self.streams) streams of 1280x720 30 fps " + String(format: "%.2f", camera.bitRate / 1e6)
                + " Mbit/s from the Annex-B file to one nginx-rtmp, \(Self.rounds * 2) × \(Int(Self.windowSeconds)) s windows "
                + "interleaved (ours, theirs, theirs, ours), each side reading, cutting and pacing the file in its windows: "
                + "AnnexBFilePlayer → RTMPPublisher.send on one event loop (EventLoopExecutor) ×\(Self.streams) in one process \(cpu(ours)); "
                + "\(Self.streams) ffmpeg -re -i FILE -c copy -f flv \(cpu(theirs))")
        BenchmarkReport.shared.record(
            "rtmp_publish_from_files_player_share", players.total / (ourCPU / Double(ours.count)), goal: "report",
            detail: "the \(Self.streams) AnnexBFilePlayers alone (each frame dropped, nothing published) over one "
                + "\(Int(Self.windowSeconds)) s window: " + CPUTime.Split.describe([players], over: Self.windowSeconds)
                + ", against ours per window in rtmp_publish_from_files_cpu_vs_ffmpeg")
    }
}
}
