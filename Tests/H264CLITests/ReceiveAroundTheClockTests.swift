import Foundation
import H264
import H264TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `h264 receive rtsp://… --reconnect` as a 24/7 recorder (issue 34's must-show): started 3 s
/// before its camera (gst-rtsp-server, Scripts/gst-rtsp-server.py), whose process is later
/// stopped for 10 s (SIGSTOP, then SIGCONT: the connection stays open, nothing comes). The two
/// delays are the scenario; every wait for something to happen polls a condition with a limit,
/// and the receiver's state comes from its `--events -`, never from its log.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct ReceiveAroundTheClockTests {
    static let frames = 240

    @Test func recordsEveryFrameAskedForThroughALateStartAndAStall() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let port = try PeerPort.candidate(.tcpListening)
        let receiver = try LoggingProcess(executable: CLI.executable, readingEvents: [
            "receive", "rtsp://127.0.0.1:\(port)/test", "-o", output, "--frames", "\(Self.frames)", "--reconnect",
            "--reconnect-delay", "0.25", "--reconnect-max-delay", "1", "--idle-timeout", "3",
        ])
        defer { receiver.kill() }
        // The scenario: the camera boots 3 s after its recorder.
        Thread.sleep(forTimeInterval: 3)
        try #require(receiver.process.isRunning, "the receiver waits for the camera: \(receiver.stderr)")
        let camera = try GStreamerRTSPServer(["\(port)"])
        defer { camera.kill() }
        let size = { ((try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0) }
        try #require(receiver.wait(timeout: 20) { _ in size() > 0 }, "nothing recorded: \(receiver.stderr)")

        // The scenario: the camera stalls for 10 s.
        kill(camera.processIdentifier, SIGSTOP)
        Thread.sleep(forTimeInterval: 10)
        kill(camera.processIdentifier, SIGCONT)
        try #require(receiver.process.isRunning, "the stall came before the recording was done: \(receiver.stderr)")

        #expect(receiver.waitForExit(timeout: 60) == 0, "\(receiver.stderr)")
        let events = receiver.waitForEventsEnd()
        let names = events.compactMap { $0["event"] }
        #expect(names.first == "playing" && names.filter { $0 == "playing" }.count == 1, "\(names)")
        let disconnections = events.filter { $0["event"] == "disconnected" }
        #expect(!disconnections.isEmpty && disconnections[0]["reason"] == "no packet for 3.0 s", "\(events)")
        let gaps = events.filter { $0["event"] == "resumed" }.compactMap { $0["gap"].flatMap(Double.init) }
        #expect(gaps.count == disconnections.count && gaps.contains { $0 >= 9 }, "the stall's gap: \(gaps)")

        let probe = try Subprocess.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                   "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", output])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        #expect(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "\(Self.frames)")
    }
}
