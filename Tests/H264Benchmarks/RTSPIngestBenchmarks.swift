import Foundation
import H264
import H264Streaming
import H264TestSupport
import NIOPosix
import Testing

extension AllBenchmarks {
/// One process receiving many cameras: `RTSPClient` ×32 in this test process (one event-loop
/// thread, each client's events read by a task that counts the access units and drops them)
/// against 32 `ffmpeg -rtsp_transport tcp -i URL -c copy -f null -` processes, on the same
/// streams of one server (`h264 relay` of ``CameraStream``, 720p, 2 Mbit/s, 30 fps, RTP
/// interleaved over TCP on both sides). CPU time (user + system) over the same wall-clock
/// window, setup excluded: this process's (`getrusage`) against the sum of the 32 ffmpegs'
/// (`/proc/PID/stat`). Debug builds run 4 streams for 2 s, as a check that every stream
/// arrives.
@Suite("RTSPIngest")
struct RTSPIngestBenchmarks {
    static let streams = Bench.isDebugBuild ? 4 : 32
    static let window: Duration = Bench.isDebugBuild ? .seconds(2) : .seconds(10)
    /// Measured windows of each side, ours and ffmpeg's alternating (ours, theirs, theirs, ours).
    static let rounds = Bench.isDebugBuild ? 1 : 2
    /// Access units every receiver has had before its window starts (past the relay's kept
    /// GOP, which a joiner gets at once, and FFmpeg's probing).
    static let warmUpUnits = 45
    static var windowSeconds: Double { Double(window.components.seconds) }

    /// One side's window: CPU seconds (user and system), and each stream's access units and bytes in the window.
    struct Window {
        var split: CPUTime.Split
        var cpu: Double { split.total }
        /// This process's voluntary context switches in the window (ours only).
        var switches = 0
        var units: [Int]
        var bytes: [Int]
    }

    /// What one client's task has counted: access units and their bytes.
    final class Counter: Sendable {
        private let counts = Locked((units: 0, bytes: 0))
        func add(_ bytes: Int) -> Int {
            counts.withLock { counts in
                counts.units += 1
                counts.bytes += bytes
                return counts.units
            }
        }
        var value: (units: Int, bytes: Int) { counts.withLock { $0 } }
    }

    /// `streams` RTSPClients on one event-loop thread, TCP interleaved.
    static func ours(url: String) async throws -> Window {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = RTSPClient.Configuration()
        configuration.transport = .tcp
        var clients: [RTSPClient] = []
        for _ in 0..<streams { clients.append(try await RTSPClient.open(url: url, group: group, configuration: configuration)) }
        let counters = clients.map { _ in Counter() }
        let (warmUps, warmed) = AsyncStream.makeStream(of: Void.self)
        let tasks = zip(clients, counters).map { client, counter in
            Task {
                var warm = false
                for await event in client {
                    guard case .frame(let unit) = event else { continue }
                    if counter.add(unit.frame.data.count) == warmUpUnits {
                        warm = true
                        warmed.yield()
                    }
                }
                if !warm { warmed.yield() } // ended early: the counts show it
            }
        }
        var ready = 0
        for await _ in warmUps {
            ready += 1
            if ready == streams { break }
        }
        let before = counters.map(\.value), cpuBefore = CPUTime.splitOfThisProcess()
        let switchesBefore = CPUTime.voluntaryContextSwitchesOfThisProcess()
        try await Task.sleep(for: window)
        let cpu = CPUTime.splitOfThisProcess() - cpuBefore
        let switches = CPUTime.voluntaryContextSwitchesOfThisProcess() - switchesBefore
        let after = counters.map(\.value)
        for client in clients { await client.close() }
        for task in tasks { await task.value }
        try await group.shutdownGracefully()
        return Window(split: cpu, switches: switches, units: zip(after, before).map { $0.units - $1.units }, bytes: zip(after, before).map { $0.bytes - $1.bytes })
    }

    /// `streams` ffmpeg processes, each writing its progress (`frame=N` lines) to a file.
    static func ffmpegs(url: String) async throws -> Window {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-ingest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let progress = (0..<streams).map { directory.appendingPathComponent("progress-\($0).txt").path }
        let processes = try progress.map { file in
            try Subprocess.launch("ffmpeg", ["-nostdin", "-nostats", "-loglevel", "error", "-rtsp_transport", "tcp", "-i", url,
                                             "-c", "copy", "-f", "null", "-progress", file, "-"])
        }
        defer {
            // SIGKILL: a child inherits the test process's blocked signals, SIGTERM among them.
            for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
            for process in processes { process.waitUntilExit() }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while progress.contains(where: { frames(in: $0) < warmUpUnits }) {
            try #require(ContinuousClock.now < deadline, "ffmpeg frames: \(progress.map(frames(in:)))")
            try #require(processes.allSatisfy { $0.isRunning }, "an ffmpeg ended; frames: \(progress.map(frames(in:)))")
            try await Task.sleep(for: .milliseconds(100)) // polls files: nothing signals their writes
        }
        let pids = processes.map(\.processIdentifier)
        let before = progress.map(frames(in:)), cpuBefore = CPUTime.splitOfProcesses(pids)
        try await Task.sleep(for: window)
        let cpu = CPUTime.splitOfProcesses(pids) - cpuBefore
        let after = progress.map(frames(in:))
        #expect(processes.allSatisfy { $0.isRunning })
        return Window(split: cpu, units: zip(after, before).map { $0 - $1 }, bytes: [])
    }

    /// The last `frame=N` of an ffmpeg `-progress` file (it writes one every 0.5 s); 0 before the first.
    static func frames(in file: String) -> Int {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8),
              let line = text.split(separator: "\n").last(where: { $0.hasPrefix("frame=") }) else { return 0 }
        return Int(line.dropFirst(6)) ?? 0
    }

    /// `rtsp_ingest_cpu_vs_ffmpeg` = our CPU seconds ÷ the 32 ffmpegs' over the same windows.
    @Test func ingestCPUVersusFFmpeg() async throws {
        let camera = try CameraStream.files()
        let relay = try LoggingProcess(executable: ServeProcess.h264Executable,
                                       ["relay", camera.annexB, "--loop", "--rtsp", "127.0.0.1:0", "--quiet"], untilListening: "rtsp")
        defer { relay.kill() }
        let url = try #require(relay.events(named: "listening").compactMap { $0["url"] }.first { $0.hasPrefix("rtsp://") }, "\(relay.stderr)")
        var ours: [Window] = [], theirs: [Window] = []
        for round in 0..<Self.rounds {
            if round % 2 == 0 {
                ours.append(try await Self.ours(url: url))
                theirs.append(try await Self.ffmpegs(url: url))
            } else {
                theirs.append(try await Self.ffmpegs(url: url))
                ours.append(try await Self.ours(url: url))
            }
        }
        #expect(relay.stop() == 0)
        // Every stream at the source rate in every window, on both sides (else the comparison is void).
        // ffmpeg's counts are sampled every 0.5 s (its -progress period): 15 frames of slack.
        for (windows, slack) in [(ours, 0), (theirs, 15)] {
            let expected = Bench.framesPerWindow(seconds: Self.windowSeconds, framesPerSecond: CameraStream.framesPerSecond, slack: slack)
            for window in windows {
                #expect(window.units.count == Self.streams && window.units.allSatisfy(expected.contains), "access units per stream (\(expected)): \(window.units)")
            }
        }
        let ourCPU = ours.reduce(0) { $0 + $1.cpu }, theirCPU = theirs.reduce(0) { $0 + $1.cpu }
        let seconds = Self.windowSeconds * Double(Self.rounds)
        let units = ours.flatMap(\.units), ffmpegUnits = theirs.flatMap(\.units), bytes = ours.flatMap(\.bytes)
        func cpu(_ windows: [Window]) -> String { CPUTime.Split.describe(windows.map(\.split), over: seconds) }
        BenchmarkReport.shared.record(
            "rtsp_ingest_cpu_vs_ffmpeg", ourCPU / theirCPU, goal: "≤ 0.25",
            detail: "\(Self.streams) streams of 1280x720 30 fps " + String(format: "%.2f", camera.bitRate / 1e6)
                + " Mbit/s from one h264 relay, TCP interleaved, \(Self.rounds) × \(Int(Self.windowSeconds)) s windows each: "
                + "RTSPClient ×\(Self.streams) in one process \(cpu(ours)) and "
                + "\(Int(Double(ours.reduce(0) { $0 + $1.switches }) / seconds)) thread wakeups a second, \(Self.streams) ffmpeg -c copy -f null \(cpu(theirs)); "
                + "access units per stream and window: ours \(units.min() ?? 0)–\(units.max() ?? 0) "
                + "(\((bytes.min() ?? 0) / 1000)–\((bytes.max() ?? 0) / 1000) kB), ffmpeg's \(ffmpegUnits.min() ?? 0)–\(ffmpegUnits.max() ?? 0)")
    }
}
}
