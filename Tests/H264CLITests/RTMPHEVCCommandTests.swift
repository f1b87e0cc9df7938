import Foundation
import H264
import H264TestSupport
import Testing

/// H.265 over Enhanced RTMP (`hvc1`) through the command line: `h264 relay FILE.265 --rtmp`
/// publishes it, `h264 receive --listen rtmp://…` writes it as Annex-B, and `h264 relay --listen
/// rtmp://… --rtsp …` serves it to FFmpeg over RTSP. No peer on this machine speaks Enhanced
/// RTMP (see `RTMPHEVCTests`), so our publisher is the source and FFmpeg reads what comes out.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RTMPHEVCCommandTests {
    /// The fixture's NAL units other than parameter sets (VPS, SPS, PPS: types 32–34), in order.
    static func pictures(_ nalUnits: [[UInt8]]) -> [[UInt8]] {
        nalUnits.filter { unit in unit.first.map { !(32...34).contains($0 >> 1 & 0x3F) } ?? false }
    }

    /// `h264 receive --listen rtmp://127.0.0.1:0/live/key -o out.265` takes the relay's `hvc1`
    /// publish of the fixture and writes its 60 access units (``expectFixtureWritten(_:from:sourceLocation:)``).
    /// Both exit 0 when the publish ends.
    @Test func receiveWritesAnHVC1Publisher() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.265").path
        let receive = try LoggingProcess(executable: CLI.executable, ["receive", "--listen", "rtmp://127.0.0.1:0/live/key", "-o", output],
                                         untilListening: "rtmp")
        defer { receive.kill() }
        let port = try #require(receive.listeningPort(scheme: "rtmp"), "\(receive.stderr)")
        let file = try TestFixtures.path(RTSPHEVCServerPeerTests.fixture)
        let relay = try CLI.run(["relay", file, "--rtmp", "rtmp://127.0.0.1:\(port)/live/key"])
        #expect(relay.status == 0, "\(relay.stderr)")
        #expect(receive.waitForExit(timeout: 20) == 0, "\(receive.stderr)")
        #expect(receive.stderr.contains("wrote 60 access units"), "\(receive.stderr)")

        try Self.expectFixtureWritten(output, from: file)
    }

    /// `output` holds the fixture `file`'s slices and SEI in order and its parameter sets (a
    /// VPS first), and FFmpeg decodes its 60 frames without an error.
    static func expectFixtureWritten(_ output: String, from file: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let sent = RTSPHEVCServerPeerTests.nalUnits([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        let written = RTSPHEVCServerPeerTests.nalUnits([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        #expect(pictures(written) == pictures(sent), sourceLocation: sourceLocation)
        let parameterSets = { (units: [[UInt8]]) in Set(units.filter { pictures([$0]).isEmpty }) }
        #expect(parameterSets(written) == parameterSets(sent), sourceLocation: sourceLocation)
        #expect(written.first.map { $0[0] >> 1 & 0x3F } == 32, "a VPS first", sourceLocation: sourceLocation)
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "framecrc", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)", sourceLocation: sourceLocation)
        #expect(String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 60,
                sourceLocation: sourceLocation)
    }

    /// `h264 relay --listen rtmp://127.0.0.1:0/live/key --rtsp 127.0.0.1:0/live` with the fixture
    /// published in a loop as `hvc1`: FFmpeg reads an H.265 stream of 320×180 over RTSP and
    /// decodes 30 pictures without an error.
    @Test func relayServesAnHVC1PublisherOverRTSP() throws {
        let relay = try LoggingProcess(executable: CLI.executable, ["relay", "--listen", "rtmp://127.0.0.1:0/live/key", "--rtsp", "127.0.0.1:0/live"],
                                       untilListening: "rtmp")
        defer { relay.kill() }
        let port = try #require(relay.listeningPort(scheme: "rtmp"), "\(relay.stderr)")
        let publisher = try LoggingProcess(executable: CLI.executable, ["relay", try TestFixtures.path(RTSPHEVCServerPeerTests.fixture), "--loop",
                                                                        "--rtmp", "rtmp://127.0.0.1:\(port)/live/key"])
        // The relay's second `listening` event (RTSP) says when the published stream is in.
        defer { publisher.kill() }
        _ = relay.wait(timeout: 20) { events in events.contains { $0["event"] == "listening" && $0["url"]?.hasPrefix("rtsp://") == true } }
        let rtsp = try #require(relay.listeningPort(scheme: "rtsp"), "\(relay.stderr)")
        try RelayHEVCPeerTests.expectFFmpegDecodesHEVC("rtsp://127.0.0.1:\(rtsp)/live", transport: "tcp", size: "320,180")
        #expect(publisher.stop() == 0, "\(publisher.stderr)")
        #expect(relay.stop() == 0, "\(relay.stderr)")
    }
}
