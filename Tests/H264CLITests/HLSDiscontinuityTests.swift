import Foundation
import H264TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A resolution switch and a camera reconnection in the middle of an HLS stream (issue 37): the
/// playlist marks each with `EXT-X-DISCONTINUITY` and a new `EXT-X-MAP`, and headless Chromium
/// plays across them (Scripts/chromium-hls.py, started before the change and reading on after it):
/// our MSE harness across the switch, Chromium's own player across the reconnection.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(4))) struct HLSDiscontinuityTests {
    /// Chromium playing `url` for `seconds` in the background: its report once it ends.
    final class BackgroundPlayer: Sendable {
        let process: Process
        let output: Pipe

        init(_ url: String, seconds: Int, _ arguments: [String]) throws {
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            process.arguments = [String(seconds + 60), "/usr/bin/python3", TestFixtures.packageRoot.appendingPathComponent("Scripts/chromium-hls.py").path,
                                 url, "--seconds", String(seconds)] + arguments
            output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        func report() throws -> Playback {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "chromium-hls.py: status \(process.terminationStatus)")
            return try JSONDecoder().decode(Playback.self, from: data)
        }
    }

    typealias Playback = HLSPeerTests.Playback

    /// The playlist at `url` once it lists a discontinuity (polled, at most `limit` s).
    static func playlistWithDiscontinuity(_ url: String, limit: Double) throws -> String? {
        let deadline = Date().addingTimeInterval(limit)
        while Date() < deadline {
            let answer = try HLSPeerTests.get(url)
            if answer.body.contains("#EXT-X-DISCONTINUITY\n") { return answer.body }
            _ = try HLSPeerTests.get(url + "?_HLS_msn=\((HLSPeerTests.hint(answer.body)?.sequence ?? 0) + 1)")
        }
        return nil
    }

    @Test func aResolutionSwitchIsADiscontinuityChromiumPlaysAcross() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 6 s at 320x240, then 6 s at 640x360, an IDR every second, as one Annex-B file.
        var both: [UInt8] = []
        for (index, size) in ["320x240", "640x360"].enumerated() {
            let part = directory.appendingPathComponent("part\(index).264").path
            let encode = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30",
                                                        "-t", "6", "-c:v", "libx264", "-bf", "0", "-g", "30", "-f", "h264", "-y", part])
            try #require(encode.status == 0, "\(encode.stderr)")
            both += try [UInt8](Data(contentsOf: URL(fileURLWithPath: part)))
        }
        let source = directory.appendingPathComponent("switch.264").path
        try Data(both).write(to: URL(fileURLWithPath: source))
        let (relay, url) = try HLSPeerTests.start(["relay", source, "--loop"])
        defer { relay.kill() }
        let player = try BackgroundPlayer(url, seconds: 14, ["--mse"])
        let playlist = try Self.playlistWithDiscontinuity(url, limit: 20)
        let text = try #require(playlist, "no discontinuity in 20 s")
        #expect(HLSPeerTests.lines(text, "#EXT-X-MAP:").count >= 2, "\(text)")
        let playback = try player.report()
        #expect(playback.error == nil && playback.stalls == 0, "\(playback)")
        #expect(playback.discontinuities.played >= 1 && playback.decodedFrames >= 330, "\(playback)")
        #expect(relay.stop() == 0, "\(relay.stderr)")
    }

    @Test func aCameraReconnectionIsADiscontinuityChromiumPlaysAcross() throws {
        let port = try PeerPort.candidate(.tcpListening)
        var camera = try GStreamerRTSPServer(["\(port)", "--audio", "aac"])
        defer { camera.kill() }
        let (relay, url) = try HLSPeerTests.start(["relay", "rtsp://127.0.0.1:\(port)/test", "--reconnect", "--reconnect-delay", "0.25",
                                                   "--reconnect-max-delay", "1"])
        defer { relay.kill() }
        _ = try HLSPeerTests.get(url)  // held until the first part
        let player = try BackgroundPlayer(url, seconds: 16, ["--native"])
        // The scenario: 4 s in, the camera goes away for 3 s and comes back on the same port.
        Thread.sleep(forTimeInterval: 4)
        camera.kill()
        Thread.sleep(forTimeInterval: 3)
        camera = try GStreamerRTSPServer(["\(port)", "--audio", "aac"])
        let playlist = try Self.playlistWithDiscontinuity(url, limit: 20)
        let text = try #require(playlist, "no discontinuity in 20 s: \(relay.stderr)")
        #expect(HLSPeerTests.lines(text, "#EXT-X-MAP:").count >= 2, "\(text)")
        let playback = try player.report()
        #expect(playback.error == nil, "\(playback)")
        #expect(playback.discontinuities.played >= 1 && playback.decodedFrames >= 240, "\(playback)")
        #expect(relay.stop() == 0, "\(relay.stderr)")
    }
}
