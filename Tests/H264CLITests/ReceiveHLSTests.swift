import Foundation
import H264TestSupport
import Testing

/// `h264 receive … --hls HOST:PORT[/PATH]` (issue 37): what a camera sends, video and audio,
/// served as HLS / Low-Latency HLS with no `-o` (the `HLSPeerTests` peers read it). In the
/// serialized `HLSPeerTests` suite: its players are heavy.
extension HLSPeerTests {
    @Test(.timeLimit(.minutes(3))) func aReceivedCameraWithAACPlaysInFFmpegAndChromium() throws {
        let camera = try GStreamerRTSPServer(["--audio", "aac"])
        defer { camera.kill() }
        let (receive, url) = try Self.start(["receive", camera.url])
        defer { receive.kill() }
        try Self.checkServer(url)
        let ffmpeg = try Self.ffmpegDecodes(url)
        #expect(ffmpeg.status == 0 && ffmpeg.stderr.isEmpty, "\(ffmpeg.stderr)")
        let playback = try Self.chromiumPlays(url)
        #expect(playback.error == nil && playback.stalls == 0, "\(playback)")
        #expect(playback.decodedFrames >= 240 && playback.audioDecoded, "\(playback)")
        let status = receive.stop(), log = receive.waitForLogEnd()
        #expect(status == 0 && log.contains("h264 receive: HLS playlist at http://127.0.0.1:"), "\(log)")
    }

    @Test(.timeLimit(.minutes(1))) func receiveWantsAnOutputOrHLS() throws {
        let neither = try CLI.run(["receive", "rtsp://127.0.0.1:1/none"])
        #expect(neither.status != 0 && neither.stderr.contains("give -o FILE, --hls HOST:PORT or both"), "\(neither.stderr)")
        let decodeNowhere = try CLI.run(["receive", "rtsp://127.0.0.1:1/none", "--hls", "127.0.0.1:0", "--decode"])
        #expect(decodeNowhere.status != 0 && decodeNowhere.stderr.contains("--decode writes y4m to -o"), "\(decodeNowhere.stderr)")
    }
}
