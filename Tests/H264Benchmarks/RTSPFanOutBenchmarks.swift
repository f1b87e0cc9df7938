import Foundation
import H264
import H264TestSupport
import Testing

extension AllBenchmarks {
/// One stream to many viewers: `h264 relay` of ``CameraStream`` (720p, 2 Mbit/s, 30 fps)
/// against gst-rtsp-server (Scripts/gst-rtsp-server.py `--matroska`: the same access units,
/// one shared pipeline, `rtph264pay`), each with the same 100 viewers playing over TCP
/// interleaved. The viewers are ``InterleavedRTSPViewer``s in this test process (read and
/// drop), so that only the server's CPU time is counted: `/proc/PID/stat` of the server process
/// over the same wall-clock window, setup and a warm-up excluded. Every viewer must get the
/// source's frame rate in the window on both sides. Debug builds run 10 viewers for 2 s, as a
/// check that every viewer is served.
@Suite("RTSPFanOut")
struct RTSPFanOutBenchmarks {
    static let viewerCount = Bench.isDebugBuild ? 10 : 100
    static let window: Duration = Bench.isDebugBuild ? .seconds(2) : .seconds(10)
    static let warmUp: Duration = .seconds(2)
    /// Measured windows of each server, ours and gst-rtsp-server's alternating (ours, theirs, theirs, ours).
    static let rounds = Bench.isDebugBuild ? 1 : 2
    static var windowSeconds: Double { Double(window.components.seconds) }

    /// One server's window: its CPU seconds (user and system), and what each viewer got in the window.
    struct Window {
        var split: CPUTime.Split
        var cpu: Double { split.total }
        var frames: [Int]
        var packets: [Int]
        var bytes: [Int]
    }

    /// Plays `url` with ``viewerCount`` viewers, reads for the warm-up, then for the window
    /// while `pid`'s CPU time is counted.
    static func watch(url: String, pid: Int32) throws -> Window {
        let port = try #require(Int(String(url.dropFirst("rtsp://127.0.0.1:".count).prefix { $0 != "/" })), "\(url)")
        let viewers = try (0..<viewerCount).map { _ in try InterleavedRTSPViewer(url: url, port: port) }
        defer { for viewer in viewers { viewer.close() } }
        InterleavedRTSPViewer.pump(viewers, for: warmUp)
        let before = viewers.map { ($0.frames, $0.packets, $0.bytes) }
        let cpuBefore = try #require(CPUTime.splitOfProcess(pid))
        InterleavedRTSPViewer.pump(viewers, for: window)
        let split = try #require(CPUTime.splitOfProcess(pid)) - cpuBefore
        #expect(viewers.allSatisfy { $0.open && $0.strayBytes == 0 })
        return Window(split: split, frames: zip(viewers, before).map { $0.frames - $1.0 },
                      packets: zip(viewers, before).map { $0.packets - $1.1 }, bytes: zip(viewers, before).map { $0.bytes - $1.2 })
    }

    /// `h264 relay FILE --rtsp 127.0.0.1:0` (path `/live`).
    static func ours(_ camera: CameraStream.Files) throws -> Window {
        let relay = try LoggingProcess(executable: ServeProcess.h264Executable,
                                       ["relay", camera.annexB, "--loop", "--rtsp", "127.0.0.1:0", "--quiet"], untilListening: "rtsp")
        defer { relay.kill() }
        let url = try #require(relay.events(named: "listening").compactMap { $0["url"] }.first { $0.hasPrefix("rtsp://") }, "\(relay.stderr)")
        let window = try watch(url: url, pid: relay.process.processIdentifier)
        #expect(relay.stop() == 0)
        return window
    }

    /// Scripts/gst-rtsp-server.py `--matroska FILE` (path `/test`).
    static func theirs(_ camera: CameraStream.Files) throws -> Window {
        let server = try GStreamerRTSPServer(["--matroska", camera.matroska])
        defer { server.kill() }
        return try watch(url: server.url, pid: server.processIdentifier)
    }

    /// `rtsp_fanout_cpu_vs_gstreamer` = our server's CPU seconds ÷ gst-rtsp-server's over the same windows.
    @Test func fanOutCPUVersusGStreamer() throws {
        let camera = try CameraStream.files()
        var ours: [Window] = [], theirs: [Window] = []
        for round in 0..<Self.rounds {
            if round % 2 == 0 {
                ours.append(try Self.ours(camera))
                theirs.append(try Self.theirs(camera))
            } else {
                theirs.append(try Self.theirs(camera))
                ours.append(try Self.ours(camera))
            }
        }
        // Every viewer at the source rate in every window, on both sides, no fewer frames and
        // no more (else the comparison is void).
        let expected = Bench.framesPerWindow(seconds: Self.windowSeconds, framesPerSecond: CameraStream.framesPerSecond)
        for window in ours + theirs {
            #expect(window.frames.count == Self.viewerCount && window.frames.allSatisfy(expected.contains), "frames per viewer (\(expected)): \(window.frames)")
        }
        let ourCPU = ours.reduce(0) { $0 + $1.cpu }, theirCPU = theirs.reduce(0) { $0 + $1.cpu }
        let seconds = Self.windowSeconds * Double(Self.rounds)
        func summary(_ windows: [Window]) -> String {
            let total = windows.reduce(0) { $0 + $1.cpu }
            let frames = windows.flatMap(\.frames), packets = windows.flatMap(\.packets), bytes = windows.flatMap(\.bytes)
            let user = windows.reduce(0) { $0 + $1.split.user }, system = windows.reduce(0) { $0 + $1.split.system }
            return String(format: "%.2f s CPU (%.1f %% of a core; user %.2f + system %.2f; ", total, total / seconds * 100, user, system)
                + windows.map { String(format: "%.2f", $0.cpu) }.joined(separator: " / ") + " s per window), each viewer "
                + "\(frames.min() ?? 0)–\(frames.max() ?? 0) frames, \(packets.min() ?? 0)–\(packets.max() ?? 0) RTP packets, "
                + "\((bytes.min() ?? 0) / 1000)–\((bytes.max() ?? 0) / 1000) kB per window"
        }
        BenchmarkReport.shared.record(
            "rtsp_fanout_cpu_vs_gstreamer", ourCPU / theirCPU, goal: "≤ 0.85",
            detail: "1280x720 30 fps " + String(format: "%.2f", camera.bitRate / 1e6) + " Mbit/s to \(Self.viewerCount) TCP-interleaved viewers, "
                + "\(Self.rounds) × \(Int(Self.windowSeconds)) s windows each: h264 relay \(summary(ours)); gst-rtsp-server \(summary(theirs))")
        // The part no server can shed: the kernel's time for the same writes (one per viewer and
        // frame on both sides; on loopback it includes the viewers' TCP receive). Our system time
        // over GStreamer's total is the lowest ratio reachable with no user-space time at all.
        let ourSystem = ours.reduce(0) { $0 + $1.split.system }, theirSystem = theirs.reduce(0) { $0 + $1.split.system }
        let ourUser = ours.reduce(0) { $0 + $1.split.user }, theirUser = theirs.reduce(0) { $0 + $1.split.user }
        BenchmarkReport.shared.record(
            "rtsp_fanout_user_cpu_vs_gstreamer", ourUser / theirUser, goal: "≤ 0.5",
            detail: String(format: "user CPU of h264 relay %.2f s, of gst-rtsp-server %.2f s, over the same windows", ourUser, theirUser))
        BenchmarkReport.shared.record(
            "rtsp_fanout_kernel_floor_vs_gstreamer", ourSystem / theirCPU, goal: "— (the least fan-out ratio reachable)",
            detail: String(format: "system CPU of h264 relay %.2f s (GStreamer's %.2f s) over gst-rtsp-server's total %.2f s", ourSystem, theirSystem, theirCPU)
                + String(format: "; user CPU: ours %.2f s, GStreamer's %.2f s", ourCPU - ourSystem, theirCPU - theirSystem))
    }
}
}
