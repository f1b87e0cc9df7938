import Foundation
import H264
import H264Streaming
import H264TestSupport
import HEVC
import NIOPosix
import Testing

/// `RTSPServer` serving H.265 to real players on 127.0.0.1: the 60 access units of
/// Fixtures/hevc/main_gop_bframes_cra.265 (x265, B-frames, an IDR then a CRA) broadcast on a mount
/// of their `hvcC`. The SDP says `H265/90000` with the record's VPS, SPS and PPS; FFmpeg
/// (`-c copy`, over TCP and UDP) receives exactly the file's NAL units, and FFmpeg and GStreamer
/// (`rtph265depay ! h265parse ! avdec_h265`) decode the pictures without an error.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RTSPHEVCServerPeerTests {
    static let fixture = "hevc/main_gop_bframes_cra.265"

    /// The fixture's access units as frames, 1/30 s apart in decoding order, in the `hvcC` of
    /// their parameter sets.
    static func frames() throws -> (source: [UInt8], format: VideoFormatDescription, frames: [LiveFrame]) {
        let source = [UInt8](try Data(contentsOf: TestFixtures.url(fixture)))
        var tracker = HEVCFormatTracker()
        var frames: [LiveFrame] = []
        for unit in HEVCAccessUnitAssembler.accessUnits(inAnnexB: source) {
            let taken = tracker.take(unit)
            let record = try #require(taken)
            frames.append(LiveFrame(avcc: unit.data, format: .hevc(record), isKeyframe: unit.isIRAP,
                                    presentationTime: .seconds(1) / 30 * frames.count))
        }
        return (source, try #require(frames.first?.format), frames)
    }

    /// The NAL units of an Annex-B stream, by our splitter.
    static func nalUnits(_ bytes: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
    }

    /// Serves the fixture at `/live` of a server on port 0; once `player` (started with the URL)
    /// has joined, broadcasts every frame; returns the player's exit status once it has exited.
    static func serve(to player: (String) throws -> Process) async throws -> (status: Int32, VideoFormatDescription) {
        let (_, format, frames) = try Self.frames()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        // A queue for the whole clip: every frame is broadcast at once.
        let live = server.mount("/live", format: format, queueLimit: 1000)
        let process = try player(server.url(host: "127.0.0.1", path: "/live"))
        // A player that exits early ends the events, so the wait below ends too.
        // On a thread of its own: waiting for a process must not hold a cooperative thread.
        Thread.detachNewThread { process.waitUntilExit(); live.finishEvents() }
        var events = live.events.makeAsyncIterator()
        var joined = false
        while !joined, let event = await events.next() { if case .viewerJoined = event { joined = true } }
        #expect(joined, "the player joined the stream")
        // The clip again and again (its times going on), a frame every 5 ms, until the player has
        // had its pictures: players probe seconds of a stream before they output its first packet.
        // On a thread of its own, not the cooperative pool: other tests running beside this one
        // may hold the pool's threads (with 2 cores it has 2) and starve a task-based feeder.
        let stopped = Locked(false)
        Thread.detachNewThread {
            for pass in 0... {
                for (index, frame) in frames.enumerated() {
                    if stopped.withLock({ $0 }) { return }
                    var next = frame
                    next.presentationTime = .seconds(1) / 30 * (pass * frames.count + index)
                    live.broadcast(next)
                    Thread.sleep(forTimeInterval: 0.005)
                }
            }
        }
        while await events.next() != nil {}   // finished by the process watcher
        stopped.withLock { $0 = true }   // the feeder stops within one frame
        await live.closeAll(flushing: false)
        await server.shutdown()
        try await group.shutdownGracefully()
        return (process.terminationStatus, format)
    }

    @Test(arguments: ["tcp", "udp"])
    func ffmpegCopiesTheFilesNALUnits(transport: String) async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("received.265")
        let errors = directory.appendingPathComponent("ffmpeg.log")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let (status, format) = try await Self.serve(to: { url in
            try Subprocess.launch("timeout", ["-k", "5", "30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport, "-i", url,
                                              "-frames:v", "60", "-c", "copy", "-f", "hevc", output.path],
                                  standardError: try FileHandle(forWritingTo: errors))
        })
        let log = try String(contentsOf: errors, encoding: .utf8)
        #expect(status == 0 && log.isEmpty, "\(log)")
        let source = [UInt8](try Data(contentsOf: TestFixtures.url(Self.fixture)))
        let received = [UInt8](try Data(contentsOf: output))
        let (got, sent) = (Self.nalUnits(received), Self.nalUnits(source))
        #expect(got == sent, "the NAL units FFmpeg received are the file's: \(got.count) of \(sent.count)")
        #expect(format.hevc?.nalUnits.count == 3, "the record holds the file's VPS, SPS and PPS")
        // The copy decodes without an error: 60 pictures.
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output.path, "-f", "framecrc", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 60)
    }

    @Test(arguments: ["tcp", "udp"])
    func gstreamerDecodesEveryPicture(transport: String) async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let frames = directory.appendingPathComponent("frames.y4m"), errors = directory.appendingPathComponent("gst.log")
        FileManager.default.createFile(atPath: frames.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let (status, _) = try await Self.serve(to: { url in
            try Subprocess.launch("timeout", ["-k", "5", "30", "gst-launch-1.0", "-q", "rtspsrc", "location=\(url)", "protocols=\(transport)",
                                              // 20 s before rtspsrc gives up on UDP (5 s by default): on a loaded
                                              // 2-core machine the first packets were seen to take longer.
                                              "timeout=20000000",
                                              "!", "rtph265depay", "!", "h265parse", "!", "avdec_h265", "!", "identity", "eos-after=60",
                                              "!", "y4menc", "!", "fdsink", "fd=1"],
                                  standardOutput: try FileHandle(forWritingTo: frames), standardError: try FileHandle(forWritingTo: errors))
        })
        let log = try String(contentsOf: errors, encoding: .utf8)
        let report = GStreamerShutdownRace.split(log)
        #expect((status == 0 || report.raceErrors > 0) && !report.rest.contains("ERROR") && !report.rest.contains("WARNING"), "\(log)")
        let y4m = try Data(contentsOf: frames)
        let headerEnd = y4m.firstIndex(of: 0x0A) ?? 0
        let header = String(decoding: y4m[..<headerEnd], as: UTF8.self)
        #expect(header.contains(" W320 ") && header.contains(" H180 "), "\(header)")
        // Whole frames (each as long as the first: GStreamer's y4menc pads its planes), 60 or more.
        let body = y4m[(headerEnd + 1)...], marker = Data("FRAME".utf8)
        let second = body.dropFirst(marker.count).firstRange(of: marker)?.lowerBound
        let frameSize = (second ?? body.endIndex) - body.startIndex
        #expect(frameSize > 320 * 180 * 3 / 2 && body.count % frameSize == 0 && body.count / frameSize >= 60,
                "60 decoded pictures: \(body.count) bytes, frames of \(frameSize)")
    }
}
