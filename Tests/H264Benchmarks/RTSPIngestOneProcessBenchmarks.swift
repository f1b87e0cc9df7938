import Foundation
import H264
import H264Streaming
import H264TestSupport
import Testing

extension AllBenchmarks {
/// One process receiving 32 cameras on both sides: `RTSPClient` ×32 in this test process (as
/// `rtsp_ingest_cpu_vs_ffmpeg`) against ONE `ffmpeg -nostdin -rtsp_transport tcp -i URL` ×32
/// `-map 0 … -map 31 -c copy -f null -`, on the same streams of one `h264 relay` of
/// ``CameraStream`` (720p, 2 Mbit/s, 30 fps, RTP interleaved over TCP). Windows alternate ours,
/// theirs, theirs, ours (ABBA). CPU time (user + system) over the same wall-clock windows: this
/// process's (`getrusage`) against the ffmpeg's (`/proc/PID/stat`).
///
/// FFmpeg's `-progress` counts the first output stream's frames only, so its window count is
/// stream 0's; every one of its 32 streams is checked at the relay, whose events say what it
/// sent each viewer: no skip to a keyframe in the window (each viewer read every frame), and
/// each viewer's frames within what the source had over the viewer's life.
@Suite("RTSPIngestOneProcess")
struct RTSPIngestOneProcessBenchmarks {
    typealias Ingest = RTSPIngestBenchmarks
    static var streams: Int { Ingest.streams }

    /// What the one ffmpeg did: its window, and the relay's account of its 32 sessions.
    struct FFmpegRun {
        var window: Ingest.Window
        /// Frames the relay sent each of ffmpeg's viewers over their whole sessions.
        var framesSent: [Int]
        /// The relay's skips to a keyframe for ffmpeg's viewers inside the window.
        var skipsInWindow: Int
        /// Seconds from ffmpeg's launch to its end.
        var lifetime: Double
    }

    /// One ffmpeg with the 32 URLs as its 32 inputs.
    static func ffmpeg(url: String, relay: LoggingProcess) async throws -> FFmpegRun {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-ingest-one-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let progress = directory.appendingPathComponent("progress.txt").path
        var arguments = ["-nostdin", "-nostats", "-loglevel", "error"]
        for _ in 0..<streams { arguments += ["-rtsp_transport", "tcp", "-i", url] }
        for index in 0..<streams { arguments += ["-map", "\(index)"] }
        arguments += ["-c", "copy", "-f", "null", "-progress", progress, "-"]
        let firstEvent = relay.events.count, launched = ContinuousClock.now
        let process = try Subprocess.launch("ffmpeg", arguments)
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        // Its start-up (opening and probing 32 inputs one after another) stays outside the window.
        let deadline = ContinuousClock.now + .seconds(60)
        while Ingest.frames(in: progress) < Ingest.warmUpUnits {
            try #require(ContinuousClock.now < deadline, "ffmpeg frames: \(Ingest.frames(in: progress))")
            try #require(process.isRunning, "ffmpeg ended; frames: \(Ingest.frames(in: progress))")
            try await Task.sleep(for: .milliseconds(100)) // polls a file: nothing signals its writes
        }
        let pid = process.processIdentifier
        let before = Ingest.frames(in: progress), windowStart = relay.events.count
        let cpuBefore = try #require(CPUTime.splitOfProcess(pid))
        try await Task.sleep(for: Ingest.window)
        let cpu = try #require(CPUTime.splitOfProcess(pid), "ffmpeg ended in the window") - cpuBefore
        let after = Ingest.frames(in: progress), windowEnd = relay.events.count
        #expect(process.isRunning)
        kill(pid, SIGKILL)
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - launched
        let lifetime = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // The relay's account of ffmpeg's 32 viewers, once it has seen each leave.
        func clients(_ name: String, in events: ArraySlice<[String: String]>) -> [[String: String]] {
            events.filter { $0["event"] == name }
        }
        let joined = Set(clients("viewer-joined", in: relay.events.dropFirst(firstEvent)).compactMap { $0["client"] })
        #expect(joined.count == streams, "ffmpeg's viewers that joined: \(joined.count)")
        let left = relay.wait(timeout: 10) { events in
            clients("viewer-left", in: events.dropFirst(firstEvent)).filter { joined.contains($0["client"] ?? "") }.count == joined.count
        }
        #expect(left, "the relay saw every ffmpeg viewer leave")
        let events = relay.events
        let framesSent = clients("viewer-left", in: events.dropFirst(firstEvent))
            .filter { joined.contains($0["client"] ?? "") }.compactMap { Int($0["framesSent"] ?? "") }
        let skips = clients("viewer-skipped", in: events[windowStart..<windowEnd]).filter { joined.contains($0["client"] ?? "") }.count
        return FFmpegRun(window: Ingest.Window(split: cpu, units: [after - before], bytes: []), framesSent: framesSent,
                         skipsInWindow: skips, lifetime: lifetime)
    }

    /// `rtsp_ingest_cpu_vs_ffmpeg_one_process` = our CPU seconds ÷ the one ffmpeg's over the same windows.
    @Test(.timeLimit(.minutes(5))) func ingestCPUVersusOneFFmpeg() async throws {
        let camera = try CameraStream.files()
        let relay = try LoggingProcess(executable: ServeProcess.h264Executable,
                                       ["relay", camera.annexB, "--loop", "--rtsp", "127.0.0.1:0", "--quiet"], untilListening: "rtsp")
        defer { relay.kill() }
        let url = try #require(relay.events(named: "listening").compactMap { $0["url"] }.first { $0.hasPrefix("rtsp://") }, "\(relay.stderr)")
        var ours: [Ingest.Window] = [], theirs: [FFmpegRun] = []
        for round in 0..<Ingest.rounds {
            for side in round % 2 == 0 ? [0, 1] : [1, 0] {
                if side == 0 {
                    ours.append(try await Ingest.ours(url: url))
                } else {
                    theirs.append(try await Self.ffmpeg(url: url, relay: relay))
                }
            }
        }
        #expect(relay.stop() == 0)
        // Every stream at the source rate in every window, no fewer access units and no more.
        let fps = CameraStream.framesPerSecond
        let expected = Bench.framesPerWindow(seconds: Ingest.windowSeconds, framesPerSecond: fps)
        for window in ours {
            #expect(window.units.count == Self.streams && window.units.allSatisfy(expected.contains), "access units per stream (\(expected)): \(window.units)")
        }
        let sampled = Bench.framesPerWindow(seconds: Ingest.windowSeconds, framesPerSecond: fps, slack: 15)
        for run in theirs {
            #expect(run.window.units.allSatisfy(sampled.contains), "ffmpeg's stream 0 frames (\(sampled)): \(run.window.units)")
            #expect(run.skipsInWindow == 0, "the relay skipped ffmpeg's viewers to a keyframe in the window")
            // Each viewer: at least the window's frames; at most the source's over its life, plus
            // the kept GOP (up to 2 s) a joiner gets at once.
            let most = Int(fps * run.lifetime * 1.05) + Int(2 * fps)
            #expect(run.framesSent.count == Self.streams && run.framesSent.allSatisfy { expected.lowerBound <= $0 && $0 <= most },
                    "frames the relay sent each ffmpeg viewer (\(expected.lowerBound)…\(most)): \(run.framesSent)")
        }
        let ourCPU = ours.reduce(0) { $0 + $1.cpu }, theirCPU = theirs.reduce(0) { $0 + $1.window.cpu }
        let seconds = Ingest.windowSeconds * Double(Ingest.rounds)
        func cpu(_ windows: [Ingest.Window]) -> String { CPUTime.Split.describe(windows.map(\.split), over: seconds) }
        let units = ours.flatMap(\.units), ffmpegUnits = theirs.flatMap(\.window.units), sent = theirs.flatMap(\.framesSent)
        BenchmarkReport.shared.record(
            "rtsp_ingest_cpu_vs_ffmpeg_one_process", ourCPU / theirCPU, goal: "≤ 0.5",
            detail: "\(Self.streams) streams of 1280x720 30 fps " + String(format: "%.2f", camera.bitRate / 1e6)
                + " Mbit/s from one h264 relay, TCP interleaved, \(Ingest.rounds * 2) × \(Int(Ingest.windowSeconds)) s windows interleaved "
                + "(ours, theirs, theirs, ours): RTSPClient ×\(Self.streams) in one process \(cpu(ours)); ONE ffmpeg with \(Self.streams) inputs "
                + "(-map each, -c copy -f null) \(cpu(theirs.map(\.window))); access units per stream and window: ours "
                + "\(units.min() ?? 0)–\(units.max() ?? 0), ffmpeg's stream 0 \(ffmpegUnits.min() ?? 0)–\(ffmpegUnits.max() ?? 0) "
                + "(the relay sent each ffmpeg viewer \(sent.min() ?? 0)–\(sent.max() ?? 0) frames over its session, no skip in a window)")
    }
}
}
