import Foundation
import H264
@testable import h264
import H264Streaming
import H264TestSupport
import Testing

/// `h264 serve` on loopback (127.0.0.1 only), each test bounded in time: the server is a
/// subprocess on a free port (`--port 0`, read from its first line), stopped with SIGTERM at
/// the end (which must exit 0). Clients are FFmpeg (`-i tcp://…`) and raw sockets whose bytes
/// go through the library's `AccessUnitReceiver` and then FFmpeg.
///
/// Only correctness is checked here: every viewer's stream starts with SPS, PPS and an IDR and
/// decodes without error. How fast pictures arrive and how soon a joining viewer has its IDR
/// are measurements: `ServeBenchmarks` in H264Benchmarks reports them.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct ServeTests {
    /// Committed fixture Fixtures/cars_320x240_30f.y4m (see Fixtures/PROVENANCE): 30 fps.
    static let y4m = TestFixtures.url("cars_320x240_30f.y4m").path
    static let frameBytes = 320 * 240 * 3 / 2
    /// The encoder settings of these tests: x264 `ultrafast` on one thread (about a
    /// millisecond per 320×240 frame).
    static let light = ["--preset", "ultrafast", "--threads", "1"]

    static func server(_ arguments: [String]) throws -> ServeProcess {
        try ServeProcess(executable: CLI.executable, input: y4m, arguments + light)
    }

    /// Three FFmpeg viewers and three raw viewers join at 0 s, about 1.3 s and about 2.7 s (when
    /// the first raw viewer has 39 and 81 pictures). Each records 45 pictures: its first NAL
    /// units are SPS, PPS, IDR and the bytes decode with zero FFmpeg errors from the first byte.
    @Test func viewersJoiningLateGetACleanStream() throws {
        let server = try Self.server(["--loop", "--quiet"])
        defer { server.kill() }
        var raw = [try TCPClient(port: server.port)]
        var ffmpeg = [try FFmpegViewer(port: server.port)]
        for joinAt in [39, 81] {
            try TCPClient.pump(raw, deadline: .now + .seconds(20)) { raw[0].accessUnits.count >= joinAt }
            raw.append(try TCPClient(port: server.port))
            ffmpeg.append(try FFmpegViewer(port: server.port))
        }
        try TCPClient.pump(raw, deadline: .now + .seconds(20)) { raw.allSatisfy { $0.accessUnits.count >= 46 } }
        for (n, client) in raw.enumerated() {
            try client.checkCleanStart(pictures: 45, label: "raw viewer \(n)")
            client.close()
        }
        for (n, viewer) in ffmpeg.enumerated() {
            let result = try viewer.wait(timeout: .seconds(30))
            #expect(result.status == 0, "FFmpeg viewer \(n): \(result.stderr)")
            #expect(result.stderr.isEmpty, "FFmpeg viewer \(n): \(result.stderr)")
            #expect(result.outputBytes == 45 * Self.frameBytes, "FFmpeg viewer \(n)")
        }
        #expect(server.stop() == 0)
    }

    /// 50 viewers at once (one IDR shared by those joining together), 15 then reset their
    /// connection, 10 close it, 5 stop reading; the other 20 keep being served a stream that
    /// decodes, and a fresh viewer afterwards still gets a clean stream. The server then stops
    /// cleanly and counts 51 clients.
    @Test func fiftyViewersSomeDroppingAbruptly() throws {
        let server = try Self.server(["--loop"])
        defer { server.kill() }
        let clients = try (0..<50).map { _ in try TCPClient(port: server.port) }
        try TCPClient.pump(clients, deadline: .now + .seconds(20)) { clients.allSatisfy { $0.firstIDROffset != nil } }
        for (n, client) in clients.enumerated() {
            #expect(client.firstNALUnitTypes == [7, 8, 5], "viewer \(n)")
        }
        for client in clients[0..<15] { client.reset() }
        for client in clients[15..<25] { client.close() }
        let stalled = clients[25..<30]
        let readers = Array(clients[30...])
        let counts = readers.map(\.accessUnits.count)
        try TCPClient.pump(readers, deadline: .now + .seconds(20)) {
            zip(readers, counts).allSatisfy { $0.accessUnits.count >= $1 + 61 }
        }
        for (n, client) in readers.enumerated() {
            try client.checkDecodes(label: "reader \(n)")
        }
        let fresh = try TCPClient(port: server.port)
        try TCPClient.pump([fresh], deadline: .now + .seconds(20)) { fresh.accessUnits.count >= 61 }
        try fresh.checkCleanStart(pictures: 60, label: "fresh viewer")
        for client in readers + Array(stalled) + [fresh] { client.close() }
        #expect(server.stop() == 0)
        let joined = server.waitForEventsEnd().filter { $0["event"] == "viewer-joined" }
        #expect(joined.count == 51, "51 clients joined: \(joined.count)")
        #expect(server.stderr.contains("to 51 clients"), "the summary: \(server.stderr.suffix(500))")
    }

    /// A viewer that stops reading (small kernel buffers, a queue of 4 frames) is skipped to an
    /// IDR: what it receives still decodes without error and restarts at SPS, PPS and IDR,
    /// while a viewer beside it keeps a stream that decodes.
    @Test func slowViewerIsSkippedToTheNextIDR() throws {
        let server = try Self.server(["--loop", "--client-queue-frames", "4", "--send-buffer-size", "4096",
                                      "--bitrate", "4000000", "--max-keyframe-interval-duration", "10"])
        defer { server.kill() }
        let slow = try TCPClient(port: server.port, receiveBufferSize: 4096)
        let fast = try TCPClient(port: server.port)
        try TCPClient.pump([fast], deadline: .now + .seconds(20)) { fast.accessUnits.count >= 40 }
        let before = fast.accessUnits.count
        try TCPClient.pump([fast, slow], deadline: .now + .seconds(20)) { fast.accessUnits.count >= before + 61 }
        try fast.checkDecodes(label: "fast viewer")
        #expect(slow.firstNALUnitTypes == [7, 8, 5])
        #expect(slow.accessUnits.filter(\.isIDR).count >= 2, "the slow viewer resumed at a later IDR")
        #expect(slow.receiver.skippedAccessUnitCount == 0 && slow.receiver.missingParameterSetCount == 0)
        #expect(slow.accessUnits.count < fast.accessUnits.count)
        try slow.checkDecodes(label: "slow viewer")
        fast.close()
        slow.close()
        #expect(server.stop() == 0)
        let skipped = server.waitForEventsEnd().filter { $0["event"] == "viewer-skipped" }
        #expect(!skipped.isEmpty && skipped.allSatisfy { $0["frames"] == "4" }, "the slow viewer was skipped: \(skipped)")
    }

    /// Started under `nice`, every thread of the server runs at that nice value
    /// (`ProcessPriority`: libdispatch on Linux starts its workers, which run the encoder and
    /// the event loop, at 0 or −4 whatever the process's value). Lowering is allowed to anyone,
    /// so the server runs under `nice -n 5`; it adopts new threads once a second, so this reads
    /// /proc for up to 5 s (the server gives no signal when it has adopted a thread).
    @Test func everyThreadKeepsThePriorityTheServerWasStartedWith() throws {
        let server = try ServeProcess(executable: CLI.executable, input: Self.y4m, ["--loop", "--quiet"] + Self.light, nice: 5)
        defer { server.kill() }
        let viewer = try TCPClient(port: server.port)
        try TCPClient.pump([viewer], deadline: .now + .seconds(20)) { viewer.accessUnits.count >= 31 }
        let pid = server.process.processIdentifier
        func niceValues() -> [Int32] { Array(ProcessPriority.threadNiceValues(of: pid).values) }
        let deadline = ContinuousClock.now + .seconds(5)
        var values = niceValues()
        while values.contains(where: { $0 != 5 }), ContinuousClock.now < deadline {
            // Three more pictures (about 0.1 s of the stream) between reads of /proc.
            let mark = viewer.accessUnits.count
            try TCPClient.pump([viewer], deadline: .now + .seconds(20)) { viewer.accessUnits.count >= mark + 3 }
            values = niceValues()
        }
        #expect(values.count > 2 && values.allSatisfy { $0 == 5 }, "nice values of the server's threads: \(values)")
        viewer.close()
        #expect(server.stop() == 0)
    }

    @Test func badArgumentsFail() throws {
        #expect(try CLI.run(["serve", Self.y4m, "--port", "70000"]).status != 0)
        #expect(try CLI.run(["serve", "-", "--port", "0", "--loop"]).status != 0)
        #expect(try CLI.run(["serve", "/nonexistent.y4m", "--port", "0"]).status != 0)
    }
}

extension TCPClient {
    /// The stream from its first byte: SPS, PPS, IDR first, nothing skipped by the receiver,
    /// and `pictures` access units decoding without error.
    func checkCleanStart(pictures: Int, label: String) throws {
        #expect(firstNALUnitTypes == [7, 8, 5], "\(label)")
        #expect(receiver.skippedByteCount == 0 && receiver.skippedAccessUnitCount == 0, "\(label)")
        #expect(firstIDROffset != nil, "\(label): no IDR")
        try #require(accessUnits.count >= pictures, "\(label)")
        try checkDecodes(upTo: pictures, label: label)
    }

    /// The bytes from the first up to picture `count` (every complete one, when nil) decode
    /// without FFmpeg errors.
    func checkDecodes(upTo count: Int? = nil, label: String) throws {
        // Only whole pictures: those the receiver completed (the last one may still be arriving).
        let last = accessUnits.last.map { $0.streamOffset + $0.byteCount } ?? 0
        let end = count.flatMap { $0 < accessUnits.count ? accessUnits[$0].streamOffset : nil } ?? last
        let expectedPictures = count ?? accessUnits.count
        let result = try FFmpeg.decode(Array(bytes[..<end]))
        #expect(result.errors.isEmpty, "\(label): \(result.errors)")
        #expect(result.frames >= expectedPictures, "\(label): \(result.frames) decoded of \(expectedPictures)")
    }
}

/// `ffmpeg -f h264 -i tcp://127.0.0.1:PORT -frames:v 45` decoding to raw video in a file.
final class FFmpegViewer {
    let process: Process
    let output: URL
    let errors: URL

    init(port: Int) throws {
        StandardDescriptors.ensureOpen()  // before the files below are opened
        let dir = try CLI.temporaryDirectory()
        output = dir.appendingPathComponent("out.yuv")
        errors = dir.appendingPathComponent("err.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        // Small probe: a live raw H.264 stream has no header worth waiting 5 s for.
        process = try Subprocess.launch("ffmpeg", ["-nostdin", "-v", "error", "-probesize", "32", "-analyzeduration", "0", "-f", "h264",
                                                   "-i", "tcp://127.0.0.1:\(port)", "-frames:v", "45", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                                                   "-y", output.path],
                                        standardError: try FileHandle(forWritingTo: errors))
    }

    func wait(timeout: Duration) throws -> (status: Int32, stderr: String, outputBytes: Int) {
        let exited = DispatchSemaphore(value: 0)
        let process = self.process
        Thread.detachNewThread { process.waitUntilExit(); exited.signal() }
        if exited.wait(timeout: .now() + Double(timeout.components.seconds)) != .success {
            process.terminate()
            _ = exited.wait(timeout: .now() + 5)
        }
        let stderr = String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self)
        let size = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
        try? FileManager.default.removeItem(at: output.deletingLastPathComponent())
        return (process.isRunning ? -1 : process.terminationStatus, stderr, size)
    }
}

enum FFmpeg {
    /// Decodes Annex-B with FFmpeg: the number of pictures and the error output.
    static func decode(_ annexB: [UInt8]) throws -> (frames: Int, errors: String) {
        let result = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", "-",
                                                   "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], stdin: annexB)
        return (result.stdout.count / ServeTests.frameBytes, result.stderr)
    }
}
