import Foundation
import H264
import H264TestSupport
import Testing

/// The camera killed and restarted 20 times under `h264 receive --reconnect` (issue 21's
/// fault must-show): the camera is `h264 relay FILE --loop --rtsp` (no encoding, an IDR at the
/// start of every loop), killed with SIGKILL and started again on the same port as soon as the
/// receiver has resumed; the receiver's `--events -` say when (`disconnected`, `reconnected`,
/// `resumed`), never its log.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct ReconnectCyclesTests {
    static let cycles = 20

    /// `h264 relay FILE --loop --rtsp 127.0.0.1:PORT` (PORT 0: a free one) and its RTSP port.
    static func camera(_ file: String, port: Int) throws -> (process: LoggingProcess, port: Int) {
        let process = try LoggingProcess(executable: CLI.executable, ["relay", file, "--loop", "--rtsp", "127.0.0.1:\(port)", "--quiet"],
                                         untilListening: "rtsp")
        guard let port = process.listeningPort(scheme: "rtsp") else {
            process.kill()
            throw LoopbackError("h264 relay did not start: \(process.stderr)")
        }
        return (process, port)
    }

    /// The receiver resumes after every restart, reports each gap, and keeps its file
    /// descriptors and memory: the same descriptors after cycle 2 and after cycle 20, and its
    /// resident memory within `residentGrowthLimitKiB` of cycle 2's. What it wrote decodes.
    ///
    /// The memory bound: from cycle 2 to cycle 20 `VmRSS` grows 120–230 KiB in these runs and
    /// over 50 cycles it levels off after about 20 (glibc arenas, dispatch threads and caches
    /// touched for the first time: heaptrack finds nothing more left at exit after 45 cycles
    /// than after 15). 512 KiB is over twice that, and fails for a leak of 20 KiB or more a
    /// reconnection (a lost connection kept with one of this stream's IDRs). The smaller leak
    /// found on the way — every lost connection's handler and depacketizer kept, ~12 KiB each,
    /// +330 KiB here — is `IdleTimerTests.anEndedClientHandlerIsFreed`'s to catch.
    @Test func theCameraKilledTwentyTimes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("camera.264").path, output = directory.appendingPathComponent("out.h264").path
        let encoded = try CLI.run(["encode", TestFixtures.url("cars_320x240_30f.y4m").path, "-o", file, "--preset", "ultrafast", "--threads", "1"])
        try #require(encoded.status == 0, "\(encoded.stderr)")
        var camera = try Self.camera(file, port: 0)
        defer { camera.process.kill() }
        let port = camera.port
        let receiver = try LoggingProcess(executable: CLI.executable, [
            "receive", "rtsp://127.0.0.1:\(port)/live", "-o", output, "--reconnect", "--reconnect-delay", "0.05",
            "--reconnect-max-delay", "0.5", "--idle-timeout", "20",
        ], untilEvent: "playing")
        defer { receiver.kill() }
        try #require(receiver.events(named: "playing").count == 1, "\(receiver.stderr)")
        let pid = receiver.process.processIdentifier
        var atCycle2 = (descriptors: 0, residentKiB: 0)
        for cycle in 1...Self.cycles {
            let before = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            try #require(receiver.wait(timeout: 15) { _ in
                ((try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0) > before
            }, "cycle \(cycle): nothing written before the kill: \(receiver.stderr)")
            camera.process.kill()
            _ = camera.process.waitForExit(timeout: 10)
            camera = try Self.camera(file, port: port)
            try #require(receiver.wait(timeout: 15) { $0.filter { $0["event"] == "resumed" }.count == cycle },
                         "cycle \(cycle): the recording did not resume: \(receiver.stderr)")
            if cycle == 2 { atCycle2 = (ProcessResources.openDescriptors(pid), ProcessResources.residentKiB(pid)) }
        }
        let atEnd = (descriptors: ProcessResources.openDescriptors(pid), residentKiB: ProcessResources.residentKiB(pid))
        #expect(receiver.stop() == 0, "\(receiver.stderr)")
        #expect(camera.process.stop() == 0)

        let events = receiver.waitForEventsEnd()
        let names = events.compactMap { $0["event"] }
        #expect(names == ["playing"] + Array(repeating: ["disconnected", "reconnected", "resumed"], count: Self.cycles).flatMap { $0 },
                "every disconnection is followed by a reconnection and the output resuming")
        for event in events where event["event"] == "disconnected" {
            #expect(event["reason"] == "the server closed the connection")
        }
        let gaps = events.filter { $0["event"] == "resumed" }.compactMap { $0["gap"].flatMap(Double.init) }
        let downtimes = events.filter { $0["event"] == "reconnected" }.compactMap { $0["downtime"].flatMap(Double.init) }
        #expect(gaps.count == Self.cycles && gaps.allSatisfy { $0 > 0 && $0 < 15 }, "the gaps reported: \(gaps)")
        #expect(downtimes.count == Self.cycles && downtimes.allSatisfy { $0 > 0 && $0 < 15 }, "the downtimes reported: \(downtimes)")

        #expect(atEnd.descriptors == atCycle2.descriptors, "file descriptors: \(atCycle2.descriptors) after cycle 2, \(atEnd.descriptors) after \(Self.cycles)")
        if !ProcessResources.underSanitizer {
            #expect(atEnd.residentKiB - atCycle2.residentKiB < Self.residentGrowthLimitKiB,
                    "VmRSS \(atCycle2.residentKiB) KiB after cycle 2, \(atEnd.residentKiB) KiB after \(Self.cycles)")
        }
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "framecrc", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(RTSPAuthenticationPeerTests.frames(decoded) > Self.cycles, "each of the 21 recordings has frames")
    }

    /// How much the receiver's `VmRSS` may grow from cycle 2 to cycle 20 (see the test).
    static let residentGrowthLimitKiB = 512
}
