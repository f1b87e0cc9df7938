import Foundation
import H264
import H264TestSupport
import Testing

/// `h264 relay FILE --rtmp …` publishing to real RTMP servers on 127.0.0.1: nginx with the RTMP
/// module (Debian `libnginx-mod-rtmp`, `record all`), whose recording FFmpeg reads with the
/// file's size, frame count, NAL units and composition times; and FFmpeg itself as the server
/// (`-listen 1 -f flv`), which receives the same NAL units.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct RTMPPeerTests {
    static let fixture = "flv/x264_bframes_320x192_9f.264"

    /// The NAL units of an FLV file as FFmpeg reads them (its `h264_mp4toannexb` filter).
    static func nalUnits(ofFLV path: String) throws -> [ArraySlice<UInt8>] {
        let out = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", "-"])
        #expect(out.status == 0, "\(out.stderr)")
        return ReferenceAnnexB.split(out.stdout)
    }

    /// The fixture's NAL units, and each picture's expected DTS and PTS in ms (its place in
    /// decoding and presentation order at its frame rate, as the relay plays it).
    static func expected() throws -> (units: [ArraySlice<UInt8>], times: [(dts: Int, pts: Int)]) {
        let bytes = try [UInt8](TestFixtures.data(fixture))
        let units = AccessUnitAssembler.accessUnits(inAnnexB: bytes).filter(\.hasPicture)
        let rate = try #require(units.first?.formatDescription?.sequenceParameterSet?.frameRate)
        var order = PresentationOrder()
        let placed = units.flatMap { order.append($0) } + order.finish()
        let ms = { (index: Int) in Int((Double(index) * 1000 / rate).rounded()) }
        return (ReferenceAnnexB.split(bytes), placed.map { (ms($0.decodeIndex), ms($0.presentationIndex) - ms(0)) })
    }

    @Test func relayPublishesAFileToNginx() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        let port = nginx.port
        let relay = try CLI.run(["relay", TestFixtures.url(Self.fixture).path, "--rtmp", "rtmp://127.0.0.1:\(port)/live/key"])
        #expect(relay.status == 0, "\(relay.stderr)")
        #expect(relay.stderr.contains("published 9 frames to rtmp://127.0.0.1:\(port)/live/key (0 dropped"), "\(relay.stderr)")
        // nginx closes the recording when the publisher's stream is deleted.
        let recording = nginx.recording(key: "key")
        let probe = { try? Subprocess.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                      "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", recording]) }
        let recorded = BoundedPolling.waitFor(seconds: 10) { probe()?.stdout == Array("h264,320,192,9\n".utf8) }
        #expect(recorded, "ffprobe: \(probe().map { String(decoding: $0.stdout, as: UTF8.self) + $0.stderr } ?? "-"); nginx: \(nginx.process.stderr)")
        // An orderly end: nginx read deleteStream and then our close, never a reset (the relay
        // half-closes and waits for nginx to close its side before it exits).
        let log = nginx.process.stderr
        #expect(log.contains("deleteStream") && log.contains("disconnect") && !log.contains("reset"), "nginx: \(log)")
        let expected = try Self.expected()
        #expect(try Self.nalUnits(ofFLV: recording) == expected.units)
        // Timestamps: DTS in ms, and PTS − DTS as the composition time (B-frames: PTS out of order).
        let packets = try Subprocess.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=dts,pts",
                                                      "-of", "csv=p=0", recording])
        let times = String(decoding: packets.stdout, as: UTF8.self).split(separator: "\n").map { line in
            line.split(separator: ",").compactMap { Int($0) }
        }
        #expect(times.map { $0.first ?? -1 } == expected.times.map { $0.pts }, "PTS")
        #expect(times.map { $0.last ?? -1 } == expected.times.map { $0.dts }, "DTS")
        #expect(expected.times.contains { $0.pts != $0.dts })
    }

    @Test func ffmpegAsTheServerReceivesTheSameNALUnits() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.flv").path
        // It must be told its port (it refuses port 0) and accepts one connection only: the test
        // waits for its listening socket on the port (another port when it could not bind one),
        // then the relay connects once.
        let (ffmpeg, port) = try PeerPort.start(.tcpListening, { port in
            try LoggingProcess(executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                               ["-nostdin", "-v", "info", "-listen", "1", "-f", "flv", "-i", "rtmp://127.0.0.1:\(port)/live/key",
                                "-c", "copy", "-y", output])
        }, process: \.process)
        defer { ffmpeg.kill() }
        let relay = try CLI.run(["relay", TestFixtures.url(Self.fixture).path, "--rtmp", "rtmp://127.0.0.1:\(port)/live/key"])
        #expect(relay.status == 0, "\(relay.stderr)")
        #expect(ffmpeg.waitForExit(timeout: 20) == 0, "ffmpeg: \(ffmpeg.waitForLogEnd())")
        #expect(try Self.nalUnits(ofFLV: output) == (try Self.expected().units))
    }

    @Test func servePublishesTheLiveEncodeToNginx() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        let port = nginx.port
        let serve = try CLI.run(["serve", TestFixtures.url("cars_320x240_30f.y4m").path, "--port", "0",
                                 "--rtmp", "rtmp://127.0.0.1:\(port)/live/camera"])
        #expect(serve.status == 0, "\(serve.stderr)")
        #expect(serve.stderr.contains("published 30 frames to rtmp://127.0.0.1:\(port)/live/camera (0 dropped"), "\(serve.stderr)")
        let recording = nginx.recording(key: "camera")
        let probe = { try? Subprocess.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                      "stream=width,height,nb_read_frames", "-of", "csv=p=0", recording]) }
        #expect(BoundedPolling.waitFor(seconds: 10) { probe()?.stdout == Array("320,240,30\n".utf8) }, "nginx: \(nginx.process.stderr)")
        // FFmpeg decodes the whole recording without a complaint.
        let decode = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", recording, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
    }

    /// A looping file relay publishes to nginx while FFmpeg plays the stream from nginx
    /// (`rtmp://…/live/KEY`, as viewers do): 30 frames decode without a complaint.
    @Test func ffmpegPlaysTheRelayFromNginx() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        // Not waited for: nginx holds the player until the stream is published.
        let relay = try LoggingProcess(executable: CLI.executable, ["relay", TestFixtures.url(Self.fixture).path, "--loop",
                                                                    "--rtmp", nginx.url(key: "looped")])
        defer { relay.kill() }
        let play = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-i", nginx.url(key: "looped"),
                                                  "-frames:v", "30", "-f", "null", "-"])
        #expect(play.status == 0 && play.stderr.isEmpty, "\(play.stderr)")
        #expect(relay.stop() == 0, "\(relay.stderr)")
        #expect(relay.stderr.contains("published"), "\(relay.stderr)")
    }

    /// `h264 receive --listen rtmp://127.0.0.1:0/live/key` takes FFmpeg's publish (`-c copy -f
    /// flv`, from the Matroska copy of the fixture) and writes the same NAL units (SPS and PPS
    /// before each IDR), then exits 0 when FFmpeg unpublishes.
    @Test func receiveListensForAnRTMPPublisher() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let receive = try LoggingProcess(executable: CLI.executable, ["receive", "--listen", "rtmp://127.0.0.1:0/live/key", "-o", output],
                                         untilListening: "rtmp")
        defer { receive.kill() }
        let port = try #require(receive.listeningPort(scheme: "rtmp"), "\(receive.stderr)")
        let publish = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-i",
                                                     TestFixtures.url("flv/x264_bframes_320x192_9f.mkv").path, "-c", "copy", "-f", "flv",
                                                     "rtmp://127.0.0.1:\(port)/live/key"])
        #expect(publish.status == 0, "\(publish.stderr)")
        #expect(receive.waitForExit(timeout: 20) == 0, "\(receive.stderr)")
        #expect(receive.stderr.contains("wrote 9 access units"), "\(receive.stderr)")
        try Self.expectFixtureNALUnits(ReferenceAnnexB.split(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))))
    }

    /// The slices and SEI of `written` equal the fixture's, in order, and its parameter sets are
    /// the fixture's (repeated before each IDR).
    /// The NAL units of the fixture, parameter sets apart (their order may differ). `looped`: the
    /// fixture was published in a loop and the viewer joined at one of its IDR pictures (the
    /// relay's kept GOP), so the slices and SEI may begin at the fixture's second GOP and go on
    /// into the next loop — a window of the fixture played twice, starting at a GOP.
    static func expectFixtureNALUnits(_ written: [ArraySlice<UInt8>], looped: Bool = false,
                                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let isParameterSet = { (unit: ArraySlice<UInt8>) in unit.first.map { $0 & 0x1F == 7 || $0 & 0x1F == 8 } ?? false }
        let expected = try Self.expected().units
        let slices = expected.filter { !isParameterSet($0) }, writtenSlices = written.filter { !isParameterSet($0) }
        // A GOP starts at an IDR slice, or at the SEI right before one.
        let gopStarts = slices.indices.filter { i in
            slices[i].first! & 0x1F == 5 && (i == 0 || slices[i - 1].first! & 0x1F != 6) || slices[i].first! & 0x1F == 6
        }
        let twice = slices + slices
        let matches = looped
            ? gopStarts.contains { start in twice.count - start >= writtenSlices.count && Array(twice[start..<(start + writtenSlices.count)]) == writtenSlices }
            : writtenSlices == slices
        #expect(matches, "the slices and SEI, in order\(looped ? ", from one of the fixture's GOPs (\(gopStarts))" : "")",
                sourceLocation: sourceLocation)
        #expect(writtenSlices.count >= min(slices.count, 9), "\(writtenSlices.count) slices written", sourceLocation: sourceLocation)
        #expect(Set(written.filter(isParameterSet).map(Array.init)) == Set(expected.filter(isParameterSet).map(Array.init)),
                sourceLocation: sourceLocation)
    }

    /// `h264 receive rtmp://…/live/KEY` plays from nginx while `h264 relay FILE --rtmp` publishes
    /// the fixture there: the same NAL units are written, the decoded y4m (`--decoded`) has the
    /// 9 frames FFmpeg decodes from them, and it exits 0 when the publisher stops.
    @Test func receivePlaysFromNginx() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        let output = directory.appendingPathComponent("out.h264").path, y4m = directory.appendingPathComponent("out.y4m").path
        let receive = try LoggingProcess(executable: CLI.executable, ["receive", nginx.url(key: "played"), "-o", output, "--decoded", y4m],
                                         untilEvent: "playing")
        defer { receive.kill() }
        #expect(receive.events(named: "playing").first?["url"] == nginx.url(key: "played"), "\(receive.stderr)")
        let relay = try CLI.run(["relay", TestFixtures.url(Self.fixture).path, "--rtmp", nginx.url(key: "played")])
        #expect(relay.status == 0, "\(relay.stderr)")
        #expect(receive.waitForExit(timeout: 20) == 0, "\(receive.stderr)")
        #expect(receive.stderr.contains("wrote 9 access units"), "\(receive.stderr)")
        try Self.expectFixtureNALUnits(ReferenceAnnexB.split(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))))
        #expect(try ReceiveDecodeTests.frameMD5s(y4m) == (try ReceiveDecodeTests.frameMD5s(output, format: ["-f", "h264"])))
        #expect(try ReceiveDecodeTests.frameMD5s(y4m).count == 9)
    }

    /// `h264 relay rtmp://…/live/KEY --rtsp 127.0.0.1:0/live` plays from nginx while a looping
    /// `h264 relay FILE --rtmp` publishes there; FFmpeg reads the RTSP output and decodes 30
    /// frames without a complaint.
    @Test func relayPlaysFromNginx() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        // Not waited for: nginx holds the player (the relay below) until the stream is published.
        let publisher = try LoggingProcess(executable: CLI.executable, ["relay", TestFixtures.url(Self.fixture).path, "--loop",
                                                                        "--rtmp", nginx.url(key: "looped")])
        defer { publisher.kill() }
        let relay = try LoggingProcess(executable: CLI.executable, ["relay", nginx.url(key: "looped"), "--rtsp", "127.0.0.1:0/live"],
                                       untilListening: "rtsp")
        defer { relay.kill() }
        let rtsp = try #require(relay.listeningPort(scheme: "rtsp"), "\(relay.stderr)")
        let decode = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i",
                                                    "rtsp://127.0.0.1:\(rtsp)/live", "-frames:v", "30", "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        #expect(relay.stop() == 0, "\(relay.stderr)")
        #expect(publisher.stop() == 0, "\(publisher.stderr)")
    }

    /// `h264 relay --listen rtmp://127.0.0.1:0/live/key --rtsp 127.0.0.1:0/live`: FFmpeg publishes
    /// the fixture in a loop (`-c copy -f flv`), FFmpeg reads the RTSP output: the first 9
    /// access units are the fixture's NAL units from the GOP the viewer joined at (the fixture
    /// has two: which one depends on when FFmpeg connects), and 30 frames decode without a complaint; the
    /// relay exits 0 when the publisher goes.
    @Test func relayServesAnRTMPPublisherOverRTSP() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let relay = try LoggingProcess(executable: CLI.executable, ["relay", "--listen", "rtmp://127.0.0.1:0/live/key", "--rtsp", "127.0.0.1:0/live"],
                                       untilListening: "rtmp")
        defer { relay.kill() }
        let port = try #require(relay.listeningPort(scheme: "rtmp"), "\(relay.stderr)")
        let publisher = try LoggingProcess(executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                                           ["-nostdin", "-v", "info", "-nostats", "-re", "-stream_loop", "-1", "-i",
                                            TestFixtures.url("flv/x264_bframes_320x192_9f.mkv").path, "-c", "copy", "-f", "flv",
                                            "rtmp://127.0.0.1:\(port)/live/key"]) // the relay's events say when its stream is in
        defer { publisher.kill() }
        _ = relay.wait(timeout: 20) { events in events.contains { $0["event"] == "listening" && $0["url"]?.hasPrefix("rtsp://") == true } }
        let rtsp = try #require(relay.listeningPort(scheme: "rtsp"), "\(relay.stderr)")
        let url = "rtsp://127.0.0.1:\(rtsp)/live", copied = directory.appendingPathComponent("copy.h264").path
        let copy = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                  "-c", "copy", "-frames:v", "9", "-f", "h264", "-y", copied])
        #expect(copy.status == 0, "\(copy.stderr)")
        try Self.expectFixtureNALUnits(ReferenceAnnexB.split(try [UInt8](Data(contentsOf: URL(fileURLWithPath: copied)))), looped: true)
        let decode = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                    "-frames:v", "30", "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        publisher.kill()
        #expect(relay.waitForExit(timeout: 20) == 0, "\(relay.stderr)")
    }

    /// `h264 receive rtmp://…` refused (`_error` to `connect`: our ingest server takes another
    /// application) or with nothing listening: exit 1 and one line naming the URL and the reason.
    @Test func receiveRefusedIsAClearError() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let server = try LoggingProcess(executable: CLI.executable, ["receive", "--listen", "rtmp://127.0.0.1:0/live/key", "-o", output],
                                        untilListening: "rtmp")
        defer { server.kill() }
        let port = try #require(server.listeningPort(scheme: "rtmp"), "\(server.stderr)")
        let refused = try CLI.run(["receive", "rtmp://127.0.0.1:\(port)/other/key", "-o", output])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("rtmp://127.0.0.1:\(port)/other/key: connect: NetConnection.Connect.Rejected"), "\(refused.stderr)")
        // A port bound by the test and not listening: a connection to it is refused, and no
        // other process can take it meanwhile.
        let closed = try LoopbackTCP.NotListening()
        let free = closed.port
        let unreachable = try CLI.run(["receive", "rtmp://127.0.0.1:\(free)/live/key", "-o", output])
        #expect(unreachable.status == 1 && unreachable.stderr.contains("rtmp://127.0.0.1:\(free)/live/key: cannot connect"), "\(unreachable.stderr)")
    }
}
