import Foundation
import H264
import H264Streaming
import H264TestSupport
import NIOPosix
import Testing

extension AllBenchmarks {
/// What relaying a camera's AAC track costs (issue 35): the same camera relayed with its audio
/// and without, in ONE process, 32 streams. In this test process, 32 relays: 32 `RTSPClient`s
/// (TCP interleaved, `Configuration.audio` on: the audio frames come as `.frame` events) playing
/// one gst-rtsp-server camera (Scripts/gst-rtsp-server.py `--matroska` of ``CameraStream``, 720p,
/// 2 Mbit/s, 30 fps; with `--audio aac` a live 48 kHz stereo AAC-LC tone besides: one camera
/// process serving 32 sessions, its CPU not ours), each feeding a `Relay` (`RelaySource.camera`)
/// mounted on ONE `RTSPServer` at /s0 … /s31 with the camera's audio track (`audioMedia`), as
/// `h264 relay` wires it. Each mount is played by one viewer in a SEPARATE process, so that its
/// CPU is not counted: ONE `ffmpeg -nostdin -loglevel error -rtsp_transport tcp -i URL0 … -i
/// URL31 -map 0 … -map 31 -c copy -f null -` (every track of every mount, audio included).
///
/// Our CPU: this process's `getrusage` (user + system, every thread) over the window, the
/// set-up and a warm-up excluded (every relay past ``warmUpFrames`` video frames, ffmpeg past its
/// probing). Windows alternate with audio, without, without, with (ABBA), each with a fresh
/// camera (its file is played once through). Each window is checked: every relay received the
/// source's video frame rate (so both sides did the same video work), and with audio the AAC
/// rate (48000 / 1024 frames a second) and none without; no viewer was skipped to a keyframe.
/// `relay_audio_cpu_overhead` = (CPU with audio − CPU without) ÷ CPU without. The relays run on
/// their camera's event loop (`RelaySource.executor`), as `h264 relay` runs them. Beside it, the
/// same ratio for FFmpeg: the viewer's (`relay_audio_ffmpeg_viewer_overhead`, from the same
/// windows) and FFmpeg's alone reading the camera in windows of their own, ABBA
/// (`relay_audio_ffmpeg_reader_overhead`): what the camera's audio costs a program that only
/// reads it. Debug builds run 4 streams for 2 s windows, as a check that everything flows.
@Suite("RelayAudio")
struct RelayAudioBenchmarks {
    static let streams = Bench.isDebugBuild ? 4 : 32
    static let window: Duration = Bench.isDebugBuild ? .seconds(2) : .seconds(10)
    static var windowSeconds: Double { Double(window.components.seconds) }
    /// Windows of each configuration (with audio, without, without, with …).
    static let rounds = Bench.isDebugBuild ? 1 : 2
    /// Video frames every relay has relayed, and ffmpeg has read on its first input, before the window.
    static let warmUpFrames = 45
    /// AAC frames a second (1024 samples at 48 kHz).
    static let audioFramesPerSecond = 48000.0 / 1024

    /// What one relay has handed its broadcaster.
    final class Counter: Sendable {
        private let counts = Locked((video: 0, audio: 0))
        func add(audio: Bool) {
            counts.withLock { if audio { $0.audio += 1 } else { $0.video += 1 } }
        }
        var value: (video: Int, audio: Int) { counts.withLock { $0 } }
    }

    /// One configuration's window: this process's CPU, and each relay's frames in the window.
    struct Window {
        var audio: Bool
        var split: CPUTime.Split
        var cpu: Double { split.total }
        /// The ffmpeg viewer's CPU over the window (another process: not in ``split``).
        var viewer: CPUTime.Split
        var video: [Int]
        var audioFrames: [Int]
        /// ffmpeg's frames of its first input in the window (sampled every 0.5 s).
        var ffmpegFrames: Int
        /// Skips of a viewer to a keyframe in the window, over the 32 broadcasters.
        var skips: Int
        /// Relays whose mount had an audio track.
        var mountsWithAudio: Int
    }

    /// A camera (with `--audio aac` when `audio`), 32 relays of it on one server, one ffmpeg
    /// playing the 32 mounts; this process's CPU over the window.
    static func measure(audio: Bool, camera files: CameraStream.Files) async throws -> Window {
        let camera = try GStreamerRTSPServer(["--matroska", files.matroska] + (audio ? ["--audio", "aac"] : []))
        defer { camera.kill() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let port = try #require(server.localAddress?.port)
        var configuration = RTSPClient.Configuration()
        configuration.transport = .tcp
        // gst-rtsp-server answers the first PLAY once its shared pipeline (the Matroska file and
        // the live AAC encoder) runs; on CI, beside the ThreadSanitizer build, that once took more
        // than the default 10 s. The benchmark measures the relay, not that start-up.
        configuration.requestTimeout = .seconds(30)
        var clients: [RTSPClient] = []
        for index in 0..<streams {
            do {
                clients.append(try await RTSPClient.open(url: camera.url, group: group, configuration: configuration))
            } catch {
                Issue.record("opening relay \(index) of \(streams) on the camera (audio: \(audio)): \(error)")
                for client in clients { await client.close() }
                await server.shutdown()
                try? await group.shutdownGracefully()
                throw error
            }
        }
        let relays = clients.map { _ in Relay(keepingGOP: .standard) }
        let counters = clients.map { _ in Counter() }
        let mounted = Locked(0)
        let tasks = (0..<streams).map { index in
            let client = clients[index], relay = relays[index], counter = counters[index]
            let source = RelaySource.camera(client)
            // On the camera's event loop, as `h264 relay` runs it (RelayCommand).
            return Task(executorPreference: source.executor) {
                let frames = source.map { frame in
                    counter.add(audio: frame.audioFormat != nil)
                    return frame
                }
                var announced = false
                return try await relay.run(frames: frames) { format in
                    server.mount("/s\(index)", broadcaster: relay.broadcaster, format: format, audio: source.audioMedia)
                    if !announced { mounted.withLock { $0 += 1 } }
                    announced = true
                }
            }
        }
        func stop() async {
            for client in clients { await client.close() }
            for task in tasks { _ = try? await task.value }
            for relay in relays { await relay.broadcaster.closeAll(flushing: false) }
            await server.shutdown()
            try? await group.shutdownGracefully()
        }
        // Every relay mounted and past its warm-up before the viewer comes.
        let deadline = ContinuousClock.now + .seconds(30)
        func relaysReady() -> Bool { mounted.withLock { $0 } == streams && counters.allSatisfy { $0.value.video >= warmUpFrames } }
        while !relaysReady() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        guard relaysReady() else {
            await stop()
            try #require(Bool(false), "relays not warmed up: \(counters.map(\.value.video)) video frames")
            throw CancellationError()
        }
        let mountsWithAudio = clients.filter { $0.audioMedia != nil }.count

        let ffmpeg = try FFmpegRTSPReader(urls: (0..<streams).map { "rtsp://127.0.0.1:\(port)/s\($0)" })
        let warm = try await ffmpeg.warmUp(frames: warmUpFrames)
        var measured: Window?
        if warm {
            try await Task.sleep(for: .seconds(1)) // the 32 viewers' kept GOPs (sent at once on joining) behind
            let before = counters.map(\.value), skipsBefore = relays.map(\.broadcaster.statistics.overflows)
            let ffmpegBefore = ffmpeg.frames, viewerBefore = ffmpeg.cpu
            let cpuBefore = CPUTime.splitOfThisProcess()
            try await Task.sleep(for: window)
            let cpu = CPUTime.splitOfThisProcess() - cpuBefore
            let viewer = ffmpeg.cpu.flatMap { after in viewerBefore.map { after - $0 } }
            let after = counters.map(\.value), skipsAfter = relays.map(\.broadcaster.statistics.overflows)
            let ffmpegAfter = ffmpeg.frames
            #expect(ffmpeg.process.isRunning, "ffmpeg ended in the window")
            #expect(relays.allSatisfy { $0.broadcaster.statistics.clients >= 1 }, "a mount no viewer played")
            measured = Window(audio: audio, split: cpu, viewer: try #require(viewer, "ffmpeg's CPU"),
                              video: zip(after, before).map { $0.video - $1.video },
                              audioFrames: zip(after, before).map { $0.audio - $1.audio }, ffmpegFrames: ffmpegAfter - ffmpegBefore,
                              skips: zip(skipsAfter, skipsBefore).map { $0 - $1 }.reduce(0, +), mountsWithAudio: mountsWithAudio)
        }
        ffmpeg.stop()
        await stop()
        return try #require(measured, "ffmpeg not warmed up (running: \(ffmpeg.process.isRunning)): \(ffmpeg.frames) frames")
    }

    /// FFmpeg processes reading the camera on their own (one input each: one process opening its
    /// inputs one after another stops reading the first while it probes the next, and
    /// gst-rtsp-server then aborts on its backlog queue's assertion). The ratio is per stream:
    /// 8 of them, not 32, keep their start-up (one after another) short.
    static let readerProcesses = Bench.isDebugBuild ? 2 : 8

    /// FFmpeg alone reading the camera (with `--audio aac` when `audio`) ``readerProcesses`` times:
    /// their CPU over a window after their warm-up, and the least frames one read.
    static func measureReader(audio: Bool, camera files: CameraStream.Files) async throws -> (cpu: CPUTime.Split, frames: Int) {
        let camera = try GStreamerRTSPServer(["--matroska", files.matroska] + (audio ? ["--audio", "aac"] : []))
        defer { camera.kill() }
        // One at a time, each reading before the next starts: many connecting at once left some
        // waiting for ever on gst-rtsp-server's shared media.
        var readers: [FFmpegRTSPReader] = []
        defer { for reader in readers { reader.stop() } }
        for index in 0..<readerProcesses {
            readers.append(try FFmpegRTSPReader(urls: [camera.url]))
            let reading = try await readers[index].warmUp(frames: 1, timeout: .seconds(20))
            try #require(reading, "ffmpeg \(index) reading the camera read nothing (running: \(readers[index].process.isRunning))")
        }
        for reader in readers {
            let warm = try await reader.warmUp(frames: warmUpFrames)
            try #require(warm, "ffmpeg reading the camera not warmed up (running: \(reader.process.isRunning)): \(reader.frames) frames")
        }
        try await Task.sleep(for: .seconds(1))
        let before = readers.map(\.cpu), framesBefore = readers.map(\.frames)
        try await Task.sleep(for: window)
        let after = readers.map(\.cpu), framesAfter = readers.map(\.frames)
        var cpu = CPUTime.Split(user: 0, system: 0)
        for (after, before) in zip(after, before) {
            let window = try #require(after.flatMap { after in before.map { after - $0 } }, "an ffmpeg reading the camera ended in the window")
            cpu = CPUTime.Split(user: cpu.user + window.user, system: cpu.system + window.system)
        }
        return (cpu, zip(framesAfter, framesBefore).map { $0 - $1 }.min() ?? 0)
    }

    /// `relay_audio_cpu_overhead` = (CPU with audio − CPU without) ÷ CPU without, over the same-length windows.
    @Test(.timeLimit(.minutes(8))) func relayAudioCPUOverhead() async throws {
        let files = try CameraStream.files()
        var windows: [Window] = []
        for round in 0..<Self.rounds {
            for audio in round % 2 == 0 ? [true, false] : [false, true] {
                windows.append(try await Self.measure(audio: audio, camera: files))
            }
        }
        let video = Bench.framesPerWindow(seconds: Self.windowSeconds, framesPerSecond: CameraStream.framesPerSecond)
        let aac = Bench.framesPerWindow(seconds: Self.windowSeconds, framesPerSecond: Self.audioFramesPerSecond,
                                          slack: Int(Self.audioFramesPerSecond / 4)) // a live encoder hands out its frames in bursts
        let sampled = Bench.framesPerWindow(seconds: Self.windowSeconds, framesPerSecond: CameraStream.framesPerSecond, slack: 15)
        for window in windows {
            #expect(window.video.count == Self.streams && window.video.allSatisfy(video.contains),
                    "video frames per relay (\(video)), audio \(window.audio): \(window.video)")
            if window.audio {
                #expect(window.mountsWithAudio == Self.streams, "mounts with an audio track: \(window.mountsWithAudio)")
                #expect(window.audioFrames.allSatisfy(aac.contains), "AAC frames per relay (\(aac)): \(window.audioFrames)")
            } else {
                #expect(window.mountsWithAudio == 0 && window.audioFrames.allSatisfy { $0 == 0 }, "audio without audio: \(window.audioFrames)")
            }
            #expect(sampled.contains(window.ffmpegFrames), "ffmpeg's first input's frames (\(sampled)): \(window.ffmpegFrames)")
            #expect(window.skips == 0, "viewers skipped to a keyframe in the window: \(window.skips)")
        }
        let with = windows.filter(\.audio), without = windows.filter { !$0.audio }
        let withCPU = with.reduce(0) { $0 + $1.cpu }, withoutCPU = without.reduce(0) { $0 + $1.cpu }
        let seconds = Self.windowSeconds * Double(Self.rounds)
        func cpu(_ windows: [Window]) -> String { CPUTime.Split.describe(windows.map(\.split), over: seconds) }
        func range(_ counts: [Int]) -> String { "\(counts.min() ?? 0)–\(counts.max() ?? 0)" }
        BenchmarkReport.shared.record(
            "relay_audio_cpu_overhead", (withCPU - withoutCPU) / withoutCPU, goal: "≤ 0.1",
            detail: "\(Self.streams) relays in one process (RTSPClient → Relay → one RTSPServer, one ffmpeg -c copy viewer "
                + "of the \(Self.streams) mounts in another) of one gst-rtsp-server camera, 1280x720 30 fps "
                + String(format: "%.2f", files.bitRate / 1e6) + " Mbit/s TCP interleaved, \(Self.rounds * 2) × \(Int(Self.windowSeconds)) s "
                + "windows (with, without, without, with): with AAC (48 kHz stereo) \(cpu(with)); without \(cpu(without)); "
                + "per relay and window: video frames with \(range(with.flatMap(\.video))), without \(range(without.flatMap(\.video))); "
                + "AAC frames with \(range(with.flatMap(\.audioFrames))); ffmpeg's first input "
                + "\(range(windows.map(\.ffmpegFrames))) frames a window")
        // The peers beside it: what the same audio costs FFmpeg, as our viewer and reading the camera itself.
        let viewerWith = with.reduce(0) { $0 + $1.viewer.total }, viewerWithout = without.reduce(0) { $0 + $1.viewer.total }
        BenchmarkReport.shared.record(
            "relay_audio_ffmpeg_viewer_overhead", (viewerWith - viewerWithout) / viewerWithout, goal: "report",
            detail: "the ffmpeg viewer of the windows above (\(Self.streams) inputs, -c copy -f null, another process): "
                + "with AAC \(CPUTime.Split.describe(with.map(\.viewer), over: seconds)); without "
                + CPUTime.Split.describe(without.map(\.viewer), over: seconds))
        var readers: [(audio: Bool, cpu: CPUTime.Split, frames: Int)] = []
        for round in 0..<Self.rounds {
            for audio in round % 2 == 0 ? [true, false] : [false, true] {
                let (cpu, frames) = try await Self.measureReader(audio: audio, camera: files)
                readers.append((audio, cpu, frames))
            }
        }
        for reader in readers {
            #expect(sampled.contains(reader.frames), "ffmpeg reading the camera: the least frames one read (\(sampled)): \(reader.frames)")
        }
        let readerWith = readers.filter(\.audio).map(\.cpu), readerWithout = readers.filter { !$0.audio }.map(\.cpu)
        let readerWithCPU = readerWith.reduce(0) { $0 + $1.total }, readerWithoutCPU = readerWithout.reduce(0) { $0 + $1.total }
        BenchmarkReport.shared.record(
            "relay_audio_ffmpeg_reader_overhead", (readerWithCPU - readerWithoutCPU) / readerWithoutCPU, goal: "report",
            detail: "FFmpeg alone reading the same camera \(Self.readerProcesses) times (\(Self.readerProcesses) processes, -rtsp_transport tcp, every track, "
                + "-c copy -f null), with AAC and without, \(Self.rounds * 2) × \(Int(Self.windowSeconds)) s windows ABBA: with "
                + "\(CPUTime.Split.describe(readerWith, over: seconds)); without \(CPUTime.Split.describe(readerWithout, over: seconds)); "
                + "the least frames one read \(range(readers.map(\.frames))) a window")
    }
}
}
