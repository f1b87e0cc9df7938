import Foundation
import H264
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `h264 relay` against real players on 127.0.0.1: a camera (a file served over RTSP) relayed to
/// 20 FFmpeg and GStreamer viewers at once, a viewer joining mid-GOP that starts from the kept IDR at once, a camera
/// (`h264 serve --rtsp`) relayed to FFmpeg, and a file relay that ends by itself.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RelayPeerTests {
    typealias Connection = RTSPPeerTests.Connection

    /// 180 frames of Fixtures/cars_320x240_30f.y4m (its 30 frames six times) encoded with an IDR
    /// every `keyframeInterval` frames: a camera with long GOPs, 6 s at 30 fps (VUI timing).
    static func longGOPFile(keyframeInterval: Int, in directory: URL) throws -> String {
        let y4m = try Data(contentsOf: TestFixtures.url("cars_320x240_30f.y4m"))
        let headerEnd = try #require(y4m.firstIndex(of: 0x0A)) + 1
        let frames = y4m[headerEnd...]
        let repeated = directory.appendingPathComponent("long.y4m"), output = directory.appendingPathComponent("long.264")
        try (y4m[..<headerEnd] + (0..<6).reduce(Data()) { data, _ in data + frames }).write(to: repeated)
        let encoded = try CLI.run(["encode", repeated.path, "-o", output.path, "--max-keyframe-interval", "\(keyframeInterval)",
                                   "--preset", "ultrafast", "--threads", "1"])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        return output.path
    }

    /// `h264 relay FILE --rtsp 127.0.0.1:0 …` with its `listening` event read.
    static func relay(_ source: String, _ arguments: [String]) throws -> (process: LoggingProcess, url: String) {
        let process = try LoggingProcess(executable: CLI.executable, ["relay", source, "--rtsp", "127.0.0.1:0"] + arguments,
                                         untilListening: "rtsp")
        guard let port = process.listeningPort(scheme: "rtsp") else {
            process.kill()
            throw LoopbackError("h264 relay did not start: \(process.stderr)")
        }
        return (process, "rtsp://127.0.0.1:\(port)/live")
    }

    /// Runs `bodies` each on a thread of its own, all at once; returns when all have.
    static func concurrently(_ bodies: [@Sendable () -> Void]) {
        let group = DispatchGroup()
        for body in bodies {
            group.enter()
            Thread.detachNewThread { body(); group.leave() }
        }
        group.wait()
    }

    @Test func twentyFFmpegAndGStreamerViewersDecode() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The camera: the file played over RTSP by a relay of its own, which the relay under test plays.
        let file = try Self.longGOPFile(keyframeInterval: 90, in: directory)
        let (camera, cameraURL) = try Self.relay(file, ["--loop"])
        defer { camera.kill() }
        let (relay, url) = try Self.relay(cameraURL, [])
        defer { relay.kill() }
        #expect(Self.problems(viewers: 20) { try Self.watch(url, viewer: $0) } == [])
        #expect(relay.stop() == 0)
        let events = relay.waitForEventsEnd()
        #expect(events.filter { $0["event"] == "session-playing" }.count >= 20, "every viewer played")
        #expect(camera.stop() == 0)
        #expect(camera.waitForEventsEnd().filter { $0["event"] == "session-playing" }.count == 1, "the relay played the camera once")
    }

    /// Runs `watch` for viewers 0 to `viewers` − 1, each on a thread of its own, all at once;
    /// returns what went wrong for each (nothing when all played).
    static func problems(viewers: Int, _ watch: @escaping @Sendable (Int) throws -> String?) -> [String] {
        let results = Locked([String]())
        concurrently((0..<viewers).map { index in {
            do {
                if let problem = try watch(index) { results.withLock { $0.append(problem) } }
            } catch {
                results.withLock { $0.append("viewer \(index): \(error)") }
            }
        } })
        return results.withLock { $0 }
    }

    /// GStreamer `rtspsrc` over `transport` decodes `frames` 320x240 frames of `url`; what went wrong, or nil.
    static func gstreamerProblem(_ url: String, transport: String, frames: Int, label: String) throws -> String? {
        let gst = try Subprocess.run("timeout", ["60", "gst-launch-1.0", "-q", "rtspsrc", "location=\(url)", "protocols=\(transport)",
                                                 "!", "rtph264depay", "!", "avdec_h264", "!", "identity", "eos-after=\(frames)", "!",
                                                 "y4menc", "!", "fdsink", "fd=1"])
        // GStreamer 1.22's shutdown race (see GStreamerShutdownRace) may follow the frames; nothing else may.
        let report = GStreamerShutdownRace.split(gst.stderr)
        let frameBytes = gst.stdout.count - (gst.stdout.firstIndex(of: 0x0A) ?? 0) - 1
        let clean = (gst.status == 0 || report.raceErrors > 0) && !report.rest.contains("ERROR") && !report.rest.contains("WARNING")
        return clean && frameBytes / (6 + 115_200) >= frames ? nil : "gstreamer \(label): status \(gst.status), \(frameBytes) bytes: \(gst.stderr)"
    }

    /// FFmpeg over `transport` decodes `frames` video frames of `url` without an error line; what went wrong, or nil.
    static func ffmpegProblem(_ url: String, transport: String, frames: Int, label: String) throws -> String? {
        let ffmpeg = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport,
                                                    "-i", url, "-map", "0:v", "-frames:v", "\(frames)", "-f", "framecrc", "-"])
        let decoded = String(decoding: ffmpeg.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        return ffmpeg.status == 0 && ffmpeg.stderr.isEmpty && decoded.count == frames
            ? nil : "ffmpeg \(label): status \(ffmpeg.status), \(decoded.count) frames: \(ffmpeg.stderr)"
    }

    /// Viewer `index` of 20 plays 60 frames of `url`: GStreamer over TCP (every third),
    /// FFmpeg over TCP or UDP (the others). Returns what went wrong, or nil.
    static func watch(_ url: String, viewer index: Int) throws -> String? {
        if index % 3 == 2 { return try gstreamerProblem(url, transport: "tcp", frames: 60, label: "\(index)") }
        let transport = index % 3 == 0 ? "tcp" : "udp"
        return try ffmpegProblem(url, transport: transport, frames: 60, label: "\(transport) \(index)")
    }

    /// RTP packets of one viewer, as access units: each ends at a marker bit; an IDR holds a NAL
    /// unit of type 5 (alone, or in an FU-A).
    struct AccessUnits {
        private(set) var isIDR: [Bool] = []
        private var current = false

        mutating func take(_ packets: [[UInt8]]) {
            for packet in packets where packet.count > 13 {
                let payload = packet[12...]
                let type = payload.first! & 0x1F
                if type == 5 || (type == 28 && payload[payload.startIndex + 1] & 0x1F == 5) { current = true }
                if packet[1] & 0x80 != 0 {
                    isIDR.append(current)
                    current = false
                }
            }
        }
    }

    /// Viewer A plays from the start; once it has 15 frames past its first IDR, viewer B joins:
    /// B's first access unit is an IDR (the kept one) and B has that GOP's 16 frames and more
    /// before A reaches the next IDR (3 s later): it did not wait for it. B's stream decodes.
    @Test func aViewerJoiningMidGOPStartsFromTheKeptIDR() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.longGOPFile(keyframeInterval: 90, in: directory)
        let (relay, url) = try Self.relay(file, ["--loop"])
        defer { relay.kill() }
        let first = try Connection(port: try #require(relay.listeningPort(scheme: "rtsp")))
        _ = try first.play(url)
        var a = AccessUnits(), b = AccessUnits()
        var second: Connection?, captured: [[UInt8]] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while (a.isIDR.firstIndex(of: true).map { a.isIDR[($0 + 1)...].contains(true) } ?? true) == false || a.isIDR.isEmpty {
            guard ContinuousClock.now < deadline else { throw LoopbackError("timed out: A has \(a.isIDR.count) frames") }
            var descriptors = ([first] + (second.map { [$0] } ?? [])).map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            #expect(first.receiveAvailable())
            a.take(first.takeFrames(channel: 0))
            if let second {
                #expect(second.receiveAvailable())
                let packets = second.takeFrames(channel: 0)
                captured += packets
                b.take(packets)
            } else if let idr = a.isIDR.firstIndex(of: true), a.isIDR.count - idr > 15 {
                let joining = try Connection(port: try #require(relay.listeningPort(scheme: "rtsp")))
                _ = try joining.play(url)
                second = joining
            }
        }
        #expect(second != nil, "B joined mid-GOP")
        #expect(b.isIDR.first == true, "B starts with an IDR")
        #expect(b.isIDR.count >= 16, "B had the kept GOP before A's next IDR: \(b.isIDR.count) frames")
        #expect(b.isIDR.dropFirst().prefix(15).allSatisfy { !$0 }, "then that GOP's P frames")
        let (units, problems) = RTPPeerTests.depacketize(captured)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", "-", "-f", "framecrc", "-"],
                                         stdin: units.flatMap { [0, 0, 0, 1] + $0 })
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count >= 16)
        #expect(relay.stop() == 0)
    }

    /// `h264 serve … --rtsp` as the camera, `h264 relay rtsp://…` in front of it, FFmpeg behind.
    @Test func aCameraRelayedToFFmpeg() throws {
        let camera = try RTSPPeerTests.Server()
        defer { camera.running.kill() }
        let (relay, url) = try Self.relay(camera.url, [])
        defer { relay.kill() }
        let decoded = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                     "-frames:v", "60", "-f", "framecrc", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let frames = String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(frames.count == 60 && frames.allSatisfy { $0.contains("115200") })
        #expect(relay.stop() == 0)
        #expect(camera.stop() == 0)
        #expect(camera.waitForEventsEnd().contains { $0["event"] == "session-ended" && $0["reason"] == "teardown" },
                "the relay tore its camera session down")
    }

    /// Without `--loop` the relay ends after the file's last frame: exit 0, the RTSP viewer's
    /// connection closed after its frames, the raw TCP viewer flushed — one GOP of 30 frames,
    /// all of it to a viewer that joined after the first (the kept GOP), decodable.
    @Test func aFileRelayWithoutLoopEndsAfterTheLastFrame() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("one-gop.264").path
        let encoded = try CLI.run(["encode", TestFixtures.url("cars_320x240_30f.y4m").path, "-o", file, "--max-keyframe-interval", "300",
                                   "--preset", "ultrafast"])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        let (relay, url) = try Self.relay(file, ["--port", "0"])
        defer { relay.kill() }
        let viewer = try Connection(port: try #require(relay.listeningPort(scheme: "rtsp")))
        _ = try viewer.play(url)
        let raw = try TCPClient(port: try #require(relay.listeningPort(scheme: "tcp")))
        var packets: [[UInt8]] = [], viewerOpen = true
        // Both viewers read as the frames come (a full kernel buffer would hold the relay's flush up).
        try TCPClient.pump([raw], deadline: .now + .seconds(20)) {
            if viewerOpen { viewerOpen = viewer.receiveAvailable() }
            packets += viewer.takeFrames(channel: 0)
            return !raw.open
        }
        while viewerOpen { viewerOpen = viewer.receive() }
        packets += viewer.takeFrames(channel: 0)
        #expect(relay.waitForExit(timeout: 20) == 0, "\(relay.stderr)")
        var rtp = AccessUnits()
        rtp.take(packets)
        #expect(rtp.isIDR.count == 30 && rtp.isIDR.first == true, "the RTSP viewer got every frame: \(rtp.isIDR.count)")
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", "-", "-f", "framecrc", "-"], stdin: raw.bytes)
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 30,
                "the TCP viewer got every frame")
    }

    /// `h264 relay --listen rtsp://127.0.0.1:0/in --rtsp 127.0.0.1:0`: FFmpeg publishes a file
    /// (`-f rtsp`, ANNOUNCE and RECORD), FFmpeg plays the relay. The publisher's `listening`
    /// event comes first, the viewers' once the stream is mounted; the relay ends (exit 0) when
    /// the publisher has sent its last frame and left.
    @Test func aPublisherRelayedToFFmpeg() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.longGOPFile(keyframeInterval: 30, in: directory)
        let relay = try LoggingProcess(executable: CLI.executable, ["relay", "--listen", "rtsp://127.0.0.1:0/in", "--rtsp", "127.0.0.1:0"],
                                       untilListening: "rtsp")
        defer { relay.kill() }
        let publishURL = try #require(relay.events(named: "listening").first?["url"], "\(relay.stderr)")
        #expect(publishURL.hasPrefix("rtsp://127.0.0.1:") && publishURL.hasSuffix("/in"))
        let published = Locked<Subprocess.Output?>(nil), publishing = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let output = try? Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-re", "-i", file, "-c", "copy",
                                                         "-f", "rtsp", "-rtsp_transport", "tcp", publishURL])
            published.withLock { $0 = output }
            publishing.signal()
        }
        try #require(relay.wait(timeout: 20) { $0.filter { $0["event"] == "listening" }.count == 2 }, "\(relay.stderr)")
        let viewURL = try #require(relay.events(named: "listening").last?["url"])
        #expect(viewURL.hasSuffix("/live") && viewURL != publishURL)
        let decoded = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", viewURL,
                                                     "-frames:v", "60", "-f", "framecrc", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 60)
        _ = publishing.wait(timeout: .now() + 60)
        #expect(published.withLock { $0?.status } == 0, "\(published.withLock { $0?.stderr ?? "not run" })")
        #expect(relay.waitForExit(timeout: 20) == 0, "\(relay.stderr)")
        let events = relay.waitForEventsEnd()
        #expect(events.first?["event"] == "listening" && events.first?["url"] == publishURL, "the publisher's address first")
        #expect(events.contains { $0["event"] == "session-recording" } && events.contains { $0["event"] == "session-playing" })
    }
}
