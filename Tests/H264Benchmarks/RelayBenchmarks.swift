import Foundation
import H264
import H264TestSupport
import Testing

extension AllBenchmarks {
/// `h264 relay` of a 30 fps file with 3-second GOPs: how long a raw TCP viewer (the Annex-B
/// fan-out of `--port`, no RTSP) who joins waits for its
/// first complete decodable frame, with the GOP kept and — the baseline, in the same run —
/// without it (`--gop-frames 1`: the viewer waits for the next IDR, as a relay that keeps
/// nothing must). Real-time figures of a subprocess on loopback, measured alike in debug and
/// release builds.
@Suite("Relay")
struct RelayBenchmarks {
    /// Joins per relay; the figures are their medians.
    static let joins = Bench.isDebugBuild ? 3 : 9
    static let keyframeInterval = 90

    /// Fixtures/cars_320x240_30f.y4m (30 fps) six times over, encoded with an IDR every 90 frames.
    static func longGOPFile(in directory: URL) throws -> String {
        let y4m = try Data(contentsOf: TestFixtures.url("cars_320x240_30f.y4m"))
        let headerEnd = try #require(y4m.firstIndex(of: 0x0A)) + 1
        let repeated = directory.appendingPathComponent("long.y4m"), output = directory.appendingPathComponent("long.264")
        try (y4m[..<headerEnd] + (0..<6).reduce(Data()) { data, _ in data + y4m[headerEnd...] }).write(to: repeated)
        let encoded = try Subprocess.run(ServeProcess.h264Executable.path, ["encode", repeated.path, "-o", output.path,
                                                                            "--max-keyframe-interval", "\(keyframeInterval)",
                                                                            "--preset", "ultrafast", "--threads", "1"])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        return output.path
    }

    /// `h264 relay FILE --loop` with the raw TCP fan-out; `joins` viewers join one at a time, each
    /// once a watching viewer has had 7 more frames (so the joins land all over the GOP), and
    /// leave once they have their first access unit. Returns each join's milliseconds from its
    /// `connect` call to the arrival of the last byte of its first access unit (an IDR).
    static func joinTimes(file: String, _ arguments: [String]) throws -> [Double] {
        let relay = try LoggingProcess(executable: ServeProcess.h264Executable,
                                       ["relay", file, "--rtsp", "127.0.0.1:0", "--port", "0", "--loop", "--quiet"] + arguments,
                                       untilListening: "rtsp")
        defer { relay.kill() }
        let port = try #require(relay.listeningPort(scheme: "tcp"), "\(relay.stderr)")
        let watcher = try TCPClient(port: port)
        var times: [Double] = []
        for _ in 0..<joins {
            let marker = watcher.accessUnits.count
            try TCPClient.pump([watcher], deadline: .now + .seconds(30)) { watcher.accessUnits.count >= marker + 7 }
            let connecting = TCPClient.realtimeNow() // the kernel may stamp the first bytes before connect() has returned
            let viewer = try TCPClient(port: port)
            // The first access unit is complete once the next begins (the receiver hands it out then).
            try TCPClient.pump([watcher, viewer], deadline: .now + .seconds(30)) { !viewer.accessUnits.isEmpty }
            let first = viewer.accessUnits[0]
            #expect(first.isIDR)
            if let at = viewer.arrival(of: first.streamOffset + first.byteCount - 1) { times.append((at - connecting) * 1000) }
            viewer.close()
        }
        #expect(relay.stop() == 0)
        return times
    }

    /// `relay_first_frame_after_join_ms` = median milliseconds from a raw TCP viewer's connect to its
    /// first complete decodable frame with the GOP kept (goal ≤ 34: one frame interval of a
    /// 30 fps source); the detail gives the same without keeping (waiting for the next IDR).
    @Test func firstFrameAfterJoin() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-relay-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.longGOPFile(in: directory)
        let kept = try Self.joinTimes(file: file, [])
        let waiting = try Self.joinTimes(file: file, ["--gop-frames", "1"])
        #expect(kept.count == Self.joins && waiting.count == Self.joins)
        BenchmarkReport.shared.record(
            "relay_first_frame_after_join_ms", Bench.median(kept), goal: "≤ 34",
            detail: String(format: "raw TCP viewer (--port, Annex-B): connect to the first complete IDR, median of %d joins (worst %.1f ms), 30 fps source with %d-frame GOPs; "
                           + "without the kept GOP (waiting for the next IDR): median %.0f ms (worst %.0f ms)",
                           Self.joins, kept.max() ?? .nan, Self.keyframeInterval, Bench.median(waiting), waiting.max() ?? .nan))
    }
}
}
