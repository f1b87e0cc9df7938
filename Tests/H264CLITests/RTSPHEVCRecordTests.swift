import Foundation
import H264
import H264TestSupport
import Testing

/// `h264 receive --listen rtsp://…` of an H.265 publisher: FFmpeg (`-f rtsp`) announces the
/// H.265 fixture (`a=rtpmap:96 H265/90000` with `sprop-vps/sps/pps`) and records it over TCP
/// interleaved and over UDP (RFC 7798 packets); the output is its Annex-B.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RTSPHEVCRecordTests {
    /// The listener logs the H.265 announcement and writes the fixture's 60 access units (its
    /// slices and SEI in order, its parameter sets; FFmpeg decodes 60 frames), and both exit 0.
    @Test(arguments: ["tcp", "udp"]) func recordsWhatFFmpegPublishes(transport: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.265").path
        let file = try TestFixtures.path(RTSPHEVCServerPeerTests.fixture)
        let listener = try RTSPRecordTests.Listener(output: output, ["--idle-timeout", "20"])
        // Over UDP at the input's pace (-re): a burst could overflow a small socket buffer.
        let published = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error"] + (transport == "udp" ? ["-re"] : [])
            + ["-i", file, "-c", "copy", "-f", "rtsp", "-rtsp_transport", transport, listener.url])
        #expect(published.status == 0, "\(published.stderr)")
        let (status, log) = listener.finish()
        #expect(status == 0, "\(log)")
        #expect(log.contains("announced H.265 (3 parameter sets in the SDP)"), "\(log)")
        #expect(log.contains("wrote 60 access units (0 before the first IRAP picture skipped)"), "\(log)")

        try RTMPHEVCCommandTests.expectFixtureWritten(output, from: file)
    }

    /// `h264 relay --listen rtsp://127.0.0.1:0/in --rtsp 127.0.0.1:0`: FFmpeg publishes a live
    /// H.265 encode (`testsrc2` through libx265 at its pace, `-f rtsp`: a camera pushing its
    /// stream; a raw `.265` file cannot loop in FFmpeg 5.1), FFmpeg plays the relay: an H.265
    /// stream of 320×180 whose first 30 pictures decode without an error; the relay exits 0 once
    /// the publisher has gone.
    @Test func aPublisherIsRelayedToFFmpeg() throws {
        let relay = try LoggingProcess(executable: CLI.executable, ["relay", "--listen", "rtsp://127.0.0.1:0/in", "--rtsp", "127.0.0.1:0"],
                                       untilListening: "rtsp")
        defer { relay.kill() }
        let publishURL = try #require(relay.events(named: "listening").first?["url"], "\(relay.stderr)")
        let publisher = try LoggingProcess(executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                                           ["-nostdin", "-v", "info", "-nostats", "-re", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30",
                                            "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error",
                                            "-f", "rtsp", "-rtsp_transport", "tcp", publishURL]) // the relay's events say when it is in
        defer { publisher.kill() }
        try #require(relay.wait(timeout: 20) { $0.filter { $0["event"] == "listening" }.count == 2 }, "\(relay.stderr)")
        let viewURL = try #require(relay.events(named: "listening").last?["url"])
        try RelayHEVCPeerTests.expectFFmpegDecodesHEVC(viewURL, transport: "tcp", size: "320,180")
        publisher.kill()
        #expect(relay.waitForExit(timeout: 20) == 0, "\(relay.stderr)")
    }
}
