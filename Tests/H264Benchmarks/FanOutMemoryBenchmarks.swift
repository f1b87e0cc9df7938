import Foundation
import H264
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Resident memory of another process, from `/proc/PID/status`.
enum ProcessMemory {
    /// `VmRSS` (resident now) or `VmHWM` (the peak) of `pid` in KiB; nil once it has gone.
    static func kib(_ pid: Int32, field: String = "VmRSS") -> Int? {
        // read(2) to the end: /proc files say they are empty, so Foundation's readers see nothing.
        let fd = open("/proc/\(pid)/status", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[..<n]
        }
        let status = String(decoding: bytes, as: UTF8.self)
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}

extension AllBenchmarks {
/// What a viewer costs the fan-out in memory: `h264 relay` of ``CameraStream`` (720p, 2 Mbit/s,
/// 30 fps, an IDR every 2 s) to ``viewerCount`` ``InterleavedRTSPViewer``s (TCP interleaved,
/// receive buffers of 64 KiB so that a stall fills them at once) that play, read for
/// ``idle``, then stop reading: the relay's writes back up into its own queues, which cut each
/// viewer back to the next keyframe. The figure is the relay's resident memory (`VmRSS`) once
/// the stall has settled, minus its resident memory before any viewer came, per viewer. The
/// same is done to gst-rtsp-server (`--matroska`, shared media) for the detail.
@Suite("FanOutMemory")
struct FanOutMemoryBenchmarks {
    static let viewerCount = Bench.isDebugBuild ? 50 : 1000
    static let idle: Duration = Bench.isDebugBuild ? .seconds(1) : .seconds(3)
    /// The stall lasts at least this (three GOPs), then until the resident memory has grown by
    /// less than 1 % over the last ``settleWindow``.
    static let minimumStall: Duration = .seconds(6)
    static let settleWindow: Duration = .seconds(3)
    static let maximumStall: Duration = .seconds(30)

    /// One server's resident memory in KiB: before the viewers, after the idle reading, once the
    /// stall settled (and how long that took), and its peak.
    struct Reading {
        var before: Int
        var idle: Int
        var stalled: Int
        var peak: Int
        var stallSeconds: Double
        /// The least frames a viewer read while idle.
        var idleFrames: Int
        var perViewer: Double { Double(stalled - before) / Double(FanOutMemoryBenchmarks.viewerCount) }
        var summary: String {
            String(format: "RSS %.1f MiB with no viewers, %.1f MiB after %d s of reading, %.1f MiB stalled (settled after %.0f s; peak %.1f MiB): %.0f KiB per viewer",
                   Double(before) / 1024, Double(idle) / 1024, Int(FanOutMemoryBenchmarks.idle.components.seconds), Double(stalled) / 1024,
                   stallSeconds, Double(peak) / 1024, perViewer)
        }
    }

    /// Reads `pid`'s resident memory every 100 ms for `duration`; the median.
    static func steadyResident(_ pid: Int32, over duration: Duration) throws -> Int {
        var samples: [Double] = []
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            samples.append(Double(try #require(ProcessMemory.kib(pid))))
            usleep(100_000) // a sampling interval, not a synchronization
        }
        return Int(Bench.median(samples))
    }

    /// Plays `url` with the viewers, reads, stalls them, and reads `pid`'s memory throughout.
    static func measure(url: String, pid: Int32) throws -> Reading {
        let port = try #require(Int(String(url.dropFirst("rtsp://127.0.0.1:".count).prefix { $0 != "/" })), "\(url)")
        let before = try steadyResident(pid, over: .seconds(2))
        var viewers: [InterleavedRTSPViewer] = []
        defer { for viewer in viewers { viewer.close() } }
        for index in 0..<viewerCount {
            viewers.append(try InterleavedRTSPViewer(url: url, port: port) { fd in
                var size: Int32 = 64 * 1024
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            })
            // Keep the viewers already playing read while the others join.
            if index % 50 == 49 { InterleavedRTSPViewer.pump(viewers, for: .milliseconds(20)) }
        }
        let framesBefore = viewers.map(\.frames)
        InterleavedRTSPViewer.pump(viewers, for: idle)
        let idleFrames = zip(viewers, framesBefore).map { $0.frames - $1 }.min() ?? 0
        let allOpen = viewers.allSatisfy { $0.open }
        #expect(allOpen, "a viewer was closed while reading")
        let idleResident = try #require(ProcessMemory.kib(pid))
        // Stalled: nobody reads from here on.
        let stallStart = ContinuousClock.now
        var samples: [(ContinuousClock.Instant, Int)] = []
        while true {
            let now = ContinuousClock.now
            samples.append((now, try #require(ProcessMemory.kib(pid), "the server exited while stalled")))
            if now - stallStart >= minimumStall,
               let reference = samples.last(where: { now - $0.0 >= settleWindow }), Double(samples.last!.1) <= Double(reference.1) * 1.01 {
                break
            }
            try #require(now - stallStart < maximumStall, "resident memory still growing after \(maximumStall): \(samples.map(\.1))")
            usleep(250_000) // a sampling interval
        }
        let stalled = samples.last!.1
        let peak = ProcessMemory.kib(pid, field: "VmHWM") ?? stalled
        return Reading(before: before, idle: idleResident, stalled: stalled, peak: peak,
                       stallSeconds: Double((ContinuousClock.now - stallStart).components.seconds), idleFrames: idleFrames)
    }

    /// `fanout_memory_per_viewer_kib` = (the relay's stalled RSS − its RSS with no viewers) ÷ viewers.
    @Test(.timeLimit(.minutes(5))) func memoryPerViewer() throws {
        let camera = try CameraStream.files()
        let relay = try LoggingProcess(executable: ServeProcess.h264Executable,
                                       ["relay", camera.annexB, "--loop", "--rtsp", "127.0.0.1:0", "--quiet"], untilListening: "rtsp")
        defer { relay.kill() }
        let url = try #require(relay.events(named: "listening").compactMap { $0["url"] }.first { $0.hasPrefix("rtsp://") }, "\(relay.stderr)")
        let ours = try Self.measure(url: url, pid: relay.process.processIdentifier)
        #expect(relay.process.isRunning, "\(relay.stderr)")
        #expect(relay.stop() == 0)
        #expect(ours.idleFrames > 0, "a viewer read no frame while idle")
        var baseline = "gst-rtsp-server (--matroska, shared media): "
        do {
            let gstreamer = try GStreamerRTSPServer(["--matroska", camera.matroska])
            defer { gstreamer.kill() }
            // The shared media starts at the first PLAY: one viewer first, so that "no viewers"
            // is a pipeline already running (as the relay's is).
            let first = try InterleavedRTSPViewer(url: gstreamer.url, port: try #require(Int(String(gstreamer.url.dropFirst("rtsp://127.0.0.1:".count).prefix { $0 != "/" }))))
            InterleavedRTSPViewer.pump([first], for: .seconds(1))
            baseline += try Self.measure(url: gstreamer.url, pid: gstreamer.processIdentifier).summary
            first.close()
        } catch {
            baseline += "not measured (\(error))"
        }
        BenchmarkReport.shared.record(
            "fanout_memory_per_viewer_kib", ours.perViewer, goal: "report",
            detail: "h264 relay of 1280x720 30 fps " + String(format: "%.2f", camera.bitRate / 1e6) + " Mbit/s to \(Self.viewerCount) "
                + "TCP-interleaved viewers (64 KiB receive buffers) playing, reading, then stalled: " + ours.summary
                + " (the least frames a viewer read while reading: \(ours.idleFrames)); " + baseline)
    }
}
}
