import Foundation
import H264
import H264TestSupport
import Testing

/// `h264 receive rtsp://…` against `h264 serve --rtsp`: RTP/AVP/TCP interleaved or RTP/AVP over
/// UDP, written as Annex-B that FFmpeg decodes; a path the server does not know is one error line.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RTSPReceiveTests {
    @Test(arguments: ["tcp", "udp"]) func receiveWritesAnnexBFFmpegDecodes(transport: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let server = try RTSPPeerTests.Server()
        let received = try CLI.run(["receive", server.url, "-o", output, "--frames", "30", "--idle-timeout", "10",
                                    "--transport", transport])
        #expect(received.status == 0, "\(received.stderr)")
        #expect(received.stderr.contains(transport == "tcp" ? "RTP on interleaved channel 0" : "RTP on udp port"), "\(received.stderr)")
        #expect(received.stderr.contains("wrote 30 access units"), "\(received.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        let types = AnnexB.nalUnits(in: bytes).map { bytes[$0.range.lowerBound] & 0x1F }
        #expect(Array(types.prefix(3)) == [7, 8, 5], "SPS, PPS, IDR first: \(types.prefix(8))")
        let probe = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "framecrc", "-"])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        let frames = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(frames.count >= 30)
        #expect(server.stop() == 0)
        let events = server.waitForEventsEnd()
        let setUp = events.filter { $0["event"] == "session-set-up" }
        #expect(setUp.count == 1 && setUp.allSatisfy {
            $0["transport"]?.hasPrefix(transport == "tcp" ? "RTP/AVP/TCP;unicast;interleaved=0-1" : "RTP/AVP;unicast;client_port=") == true
        }, "\(setUp)")
        // The receiver ended its session with TEARDOWN.
        #expect(events.contains { $0["event"] == "session-ended" && $0["reason"] == "teardown" && $0["session"] == setUp.first?["session"] },
                "\(events)")
    }

    @Test func unknownPathIsOneErrorLine() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try RTSPPeerTests.Server()
        let received = try CLI.run(["receive", "rtsp://127.0.0.1:\(server.port)/nothing", "-o",
                                    directory.appendingPathComponent("out.h264").path, "--idle-timeout", "5"])
        #expect(received.status == 1)
        let lines = received.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("h264 receive: error: ") && lines[0].hasSuffix("404 Not Found"),
                "\(received.stderr)")
        #expect(server.stop() == 0)
    }
}
