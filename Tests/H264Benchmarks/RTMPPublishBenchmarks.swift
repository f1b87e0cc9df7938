import Foundation
import H264
import H264Streaming
import H264TestSupport
import NIOCore
import NIOPosix
import Testing

extension AllBenchmarks {
/// One process publishing many pre-encoded streams to an RTMP server: `RTMPPublisher` ×8 in this
/// test process (one event-loop thread, whose timer paces all eight at 30 fps, handing each frame
/// to ``RTMPPublisher/offer(_:)``; `rtmp_publish_cpu_task_paced_vs_ffmpeg` paces them with a
/// task's `Task.sleep` instead, what that costs) against 8 `ffmpeg -re -framerate 30 -i camera.264 -c copy -f flv
/// rtmp://…` processes, both to the same nginx-rtmp (`live on`, no recording). The streams are
/// ``CameraStream``'s (720p, 2 Mbit/s, 30 fps); ours are cut into access units once, before the
/// window, and the same frames are shared by all 8 publishers (an encoder hands them so), while
/// each ffmpeg reads and parses its file inside its window; one window each, not interleaved
/// (`rtmp_publish_from_files_cpu_vs_ffmpeg` measures the like-for-like case). CPU time (user + system) over the same wall-clock window, setup
/// excluded: this process's (`getrusage`) against the sum of the 8 ffmpegs' (`/proc/PID/stat`).
/// Debug builds run 2 streams for 2 s, as a check that every stream is published.
@Suite("RTMPPublish")
struct RTMPPublishBenchmarks {
    static let streams = Bench.isDebugBuild ? 2 : 8
    static let window: Duration = Bench.isDebugBuild ? .seconds(2) : .seconds(10)
    static let warmUp: Duration = .seconds(2)
    static var windowSeconds: Double { Double(window.components.seconds) }

    /// nginx-rtmp without recording (the benchmark measures the publishers, not nginx's disk).
    static func nginx(in directory: URL) throws -> NginxRTMPServer {
        try NginxRTMPServer(in: directory, record: false)
    }

    /// How our side paces the frames at 30 fps.
    enum Pacing {
        /// A timer on the publishers' event loop: each tick offers every stream its frame there
        /// and schedules the next (one thread, woken once per tick).
        case eventLoopTimer
        /// A task that sleeps until each tick (`Task.sleep`) and offers from the cooperative pool:
        /// Dispatch's timer thread, a pool thread and the event loop are woken per tick.
        case task
    }

    /// `streams` publishers on one event-loop thread, paced by `pacing`; frames sent in the window.
    static func ours(nginx: NginxRTMPServer, units: [AccessUnit], format: FormatDescription,
                     pacing: Pacing) async throws -> (CPUTime.Split, [Int]) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var connected: [RTMPPublisher] = []
        for index in 0..<streams {
            connected.append(try await RTMPPublisher.connect(to: nginx.url(key: "ours\(index)"), group: group))
        }
        let publishers = connected, interval = Duration.seconds(1) / 30
        let offer: @Sendable (Int) -> Void = { index in
            let unit = units[index % units.count]
            let frame = LiveFrame(avcc: unit.data, formatDescription: unit.formatDescription ?? format, isKeyframe: unit.isIDR,
                                  presentationTime: interval * index)
            for publisher in publishers { publisher.offer(frame) }
        }
        let start = (clock: ContinuousClock.now, loop: NIODeadline.now()), warmUpFrames = Int(30 * warmUp.components.seconds)
        try await pace(pacing, frames: 0..<warmUpFrames, from: start, on: group.next(), offer: offer)
        let before = publishers.map(\.statistics.framesSent), cpuBefore = CPUTime.splitOfThisProcess()
        try await pace(pacing, frames: warmUpFrames..<warmUpFrames + Int(30 * windowSeconds), from: start, on: group.next(), offer: offer)
        let cpu = CPUTime.splitOfThisProcess() - cpuBefore
        let sent = zip(publishers.map(\.statistics.framesSent), before).map { $0 - $1 }
        for publisher in publishers {
            #expect(publisher.statistics.framesDropped == 0, "\(publisher.statistics)")
            await publisher.finish()
        }
        try await group.shutdownGracefully()
        return (cpu, sent)
    }

    /// Offers frames `range`, frame *i* at `start` + *i* / 30 s, paced as `pacing` says; returns after the last.
    static func pace(_ pacing: Pacing, frames range: Range<Int>, from start: (clock: ContinuousClock.Instant, loop: NIODeadline),
                     on loop: any EventLoop, offer: @escaping @Sendable (Int) -> Void) async throws {
        let interval = Duration.seconds(1) / 30
        switch pacing {
        case .task:
            for index in range {
                if ContinuousClock.now < start.clock + interval * index {
                    try await Task.sleep(until: start.clock + interval * index, clock: .continuous)
                }
                offer(index)
            }
        case .eventLoopTimer:
            let done = loop.makePromise(of: Void.self)
            @Sendable func tick(_ index: Int) {
                guard index < range.upperBound else { return done.succeed() }
                offer(index)
                loop.scheduleTask(deadline: start.loop + TimeAmount(interval * (index + 1))) { tick(index + 1) }
            }
            loop.scheduleTask(deadline: start.loop + TimeAmount(interval * range.lowerBound)) { tick(range.lowerBound) }
            try await done.futureResult.get()
        }
    }

    /// `streams` ffmpeg processes publishing the Annex-B file at its rate (`-re`, after
    /// `inputOptions`) to stream keys `key`0, `key`1, …; the frames each sent in the window (its
    /// `-progress` file).
    static func ffmpegs(nginx: NginxRTMPServer, file: String, directory: URL, key: String = "ffmpeg",
                        inputOptions: [String] = ["-framerate", "30"]) async throws -> (CPUTime.Split, [Int]) {
        let progress = (0..<streams).map { directory.appendingPathComponent("progress-\(key)-\($0).txt").path }
        let processes = try progress.indices.map { index in
            try Subprocess.launch("ffmpeg", ["-nostdin", "-nostats", "-loglevel", "error", "-re"] + inputOptions + ["-i", file,
                                             "-c", "copy", "-f", "flv", "-progress", progress[index], nginx.url(key: "\(key)\(index)")])
        }
        defer {
            for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
            for process in processes { process.waitUntilExit() }
        }
        // Their start-up (probing the file, connecting) stays outside the window: it opens once each has sent a second.
        let deadline = ContinuousClock.now + .seconds(30)
        while progress.contains(where: { RTSPIngestBenchmarks.frames(in: $0) < 30 }) {
            try #require(ContinuousClock.now < deadline && processes.allSatisfy { $0.isRunning }, "\(progress.map(RTSPIngestBenchmarks.frames(in:)))")
            try await Task.sleep(for: .milliseconds(100)) // polls files: nothing signals their writes
        }
        let pids = processes.map(\.processIdentifier)
        let before = progress.map(RTSPIngestBenchmarks.frames(in:)), cpuBefore = CPUTime.splitOfProcesses(pids)
        try await Task.sleep(for: window)
        let cpu = CPUTime.splitOfProcesses(pids) - cpuBefore
        let after = progress.map(RTSPIngestBenchmarks.frames(in:))
        #expect(processes.allSatisfy { $0.isRunning })
        return (cpu, zip(after, before).map { $0 - $1 })
    }

    /// `rtmp_publish_cpu_vs_ffmpeg` = our CPU seconds ÷ the 8 ffmpegs' over windows of the same length.
    @Test func publishCPUVersusFFmpeg() async throws {
        let camera = try CameraStream.files()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-rtmp-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try Self.nginx(in: directory)
        defer { nginx.kill() }
        let units = AccessUnitAssembler.accessUnits(inAnnexB: [UInt8](try Data(contentsOf: URL(fileURLWithPath: camera.annexB))))
            .filter(\.hasPicture)
        let format = try #require(units.first?.formatDescription)
        let (ourCPU, ourFrames) = try await Self.ours(nginx: nginx, units: units, format: format, pacing: .eventLoopTimer)
        let (taskPacedCPU, taskPacedFrames) = try await Self.ours(nginx: nginx, units: units, format: format, pacing: .task)
        let (theirCPU, theirFrames) = try await Self.ffmpegs(nginx: nginx, file: camera.annexB, directory: directory)
        // Every stream at the source rate on both sides (ffmpeg's counts are sampled every 0.5 s).
        let expected = Bench.framesPerWindow(seconds: Self.windowSeconds), sampled = Bench.framesPerWindow(seconds: Self.windowSeconds, slack: 15)
        for frames in [ourFrames, taskPacedFrames] {
            #expect(frames.count == Self.streams && frames.allSatisfy(expected.contains), "frames per stream (\(expected)): \(frames)")
        }
        #expect(theirFrames.count == Self.streams && theirFrames.allSatisfy(sampled.contains), "ffmpeg's frames (\(sampled)): \(theirFrames)")
        func cpu(_ split: CPUTime.Split) -> String {
            String(format: "%.2f s CPU (%.1f %% of a core; user %.2f + system %.2f)", split.total,
                   split.total / Self.windowSeconds * 100, split.user, split.system)
        }
        BenchmarkReport.shared.record(
            "rtmp_publish_cpu_vs_ffmpeg", ourCPU.total / theirCPU.total, goal: "≤ 0.3",
            detail: "\(Self.streams) streams of 1280x720 30 fps " + String(format: "%.2f", camera.bitRate / 1e6)
                + " Mbit/s to one nginx-rtmp, one \(Int(Self.windowSeconds)) s window each, not interleaved: RTMPPublisher ×\(Self.streams) in one process "
                + "offering access units cut before the window, the same frames shared by all \(Self.streams) (no file read, no parsing) "
                + "\(cpu(ourCPU)), \(Self.streams) ffmpeg -re -c copy -f flv \(cpu(theirCPU)); frames per stream: ours "
                + "\(ourFrames.min() ?? 0)–\(ourFrames.max() ?? 0), ffmpeg's \(theirFrames.min() ?? 0)–\(theirFrames.max() ?? 0)")
        BenchmarkReport.shared.record(
            "rtmp_publish_cpu_task_paced_vs_ffmpeg", taskPacedCPU.total / theirCPU.total, goal: "—",
            detail: "the same publish paced by a task sleeping until each frame (Task.sleep) instead of the event loop's timer: "
                + "RTMPPublisher ×\(Self.streams) \(cpu(taskPacedCPU)); frames per stream "
                + "\(taskPacedFrames.min() ?? 0)–\(taskPacedFrames.max() ?? 0)")
    }
}
}
