import Foundation
import H264
import H264TestSupport
import Testing

/// `h264 relay` of H.265 sources to FFmpeg, without a codec flag: an Annex-B `.265` file (told
/// from its NAL unit headers) and an H.265 camera (gst-rtsp-server: x265enc, rtph265pay).
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RelayHEVCPeerTests {
    /// `h264 relay Fixtures/hevc/main_gop_bframes_cra.265 --loop`: FFmpeg (`-c copy`, TCP) gets
    /// 60 access units whose NAL units are the file's from one of its IRAP pictures on (a viewer
    /// starts from the kept GOP), parameter sets first; the copy decodes without an error.
    /// (The RTP timestamps are the pictures' presentation times, from their picture order counts.)
    @Test func aFileRelayGivesFFmpegTheFilesNALUnits() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try TestFixtures.path(RTSPHEVCServerPeerTests.fixture)
        let (relay, url) = try RelayPeerTests.relay(file, ["--loop"])
        defer { relay.kill() }
        let output = directory.appendingPathComponent("relayed.265").path
        let copied = try Subprocess.run("timeout", ["-k", "5", "30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp",
                                                    "-i", url, "-frames:v", "60", "-c", "copy", "-f", "hevc", output])
        // RTP carries presentation times only: FFmpeg's muxer complains of the decoding times it
        // guesses for the B-frames (`pts < dts`, `non monotonically increasing dts`), nothing else.
        let complaints = copied.stderr.split(separator: "\n").filter { !$0.contains("dts") }
        #expect(copied.status == 0 && complaints.isEmpty, "\(copied.stderr)")
        #expect(relay.stop() == 0)

        let sent = RTSPHEVCServerPeerTests.nalUnits([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        let got = RTSPHEVCServerPeerTests.nalUnits([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))))
        let looped = sent + sent
        // Where the copy starts in the (looping) file: at a VPS, and from there byte for byte.
        let start = sent.indices.first { index in
            sent[index].first.map { $0 >> 1 & 0x3F } == 32 && looped[index...].starts(with: got.prefix(sent.count))
        }
        #expect(start != nil && got.count >= 60, "FFmpeg's \(got.count) NAL units are a run of the file's from a VPS")
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
    }

    /// `h264 relay rtsp://H265-CAMERA`: the relay plays the camera (RFC 7798) and serves it
    /// again (RFC 7798); FFmpeg over UDP decodes 30 pictures of 320×240 without an error.
    @Test func anH265CameraIsRelayedToFFmpeg() throws {
        let camera = try GStreamerRTSPServer(["--codec", "h265"])
        defer { camera.kill() }
        let (relay, url) = try RelayPeerTests.relay(camera.url, [])
        defer { relay.kill() }
        try Self.expectFFmpegDecodesHEVC(url, transport: "udp", size: "320,240")
        #expect(relay.stop() == 0)
    }

    /// FFmpeg reads an H.265 stream of `size` ("W,H") at the RTSP `url` over `transport` and
    /// decodes 30 pictures from it without an error.
    static func expectFFmpegDecodesHEVC(_ url: String, transport: String, size: String,
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let probe = try Subprocess.run("timeout", ["-k", "5", "30", "ffprobe", "-v", "error", "-rtsp_transport", transport,
                                                   "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url])
        #expect(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "hevc,\(size)",
                "\(probe.stderr)", sourceLocation: sourceLocation)
        let decoded = try Subprocess.run("timeout", ["-k", "5", "30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport,
                                                     "-i", url, "-frames:v", "30", "-f", "framecrc", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)", sourceLocation: sourceLocation)
        #expect(String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 30,
                sourceLocation: sourceLocation)
    }
}
