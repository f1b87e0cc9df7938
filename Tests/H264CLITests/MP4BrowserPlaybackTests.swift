import Foundation
import H264TestSupport
import Testing

/// What a browser plays of the MP4 files `h264 convert` writes (issue 36): headless Chromium
/// (Debian's `chromium` with `chromium-driver`, driven by Scripts/chromium-play.py through
/// python3-selenium) plays a 10 s x264 stream with B-frames (3, pyramid) as a progressive MP4 and
/// as its fragmented twin from start to end, from a page of the same origin, decodes every frame
/// and seeks: the progressive file with `<video src>`, the fragmented one through Media Source
/// Extensions (as HLS players and every web player of fragmented MP4 feed it) and with
/// `<video src>`. Every program runs under `timeout`.
///
/// The duration is to the frame (10 s) where the timestamps are the file's own: `<video src>`
/// of the progressive file, MSE of the fragmented one. `<video src>` of a fragmented file goes
/// through FFmpeg's demuxer, which moves every presentation time later by the largest negative
/// composition offset (the B-frames' delay) and reports 10.033 s for ours as for FFmpeg's own
/// `-movflags frag_keyframe+empty_moov` file; MSE of FFmpeg's file reports 10.067 s (it has no
/// negative offsets, and MSE ignores edit lists).
@Suite(.serialized, .ownThread, .timeLimit(.minutes(4))) struct MP4BrowserPlaybackTests {
    static let seconds = 10.0
    static let framesPerSecond = 30.0

    /// The 10 s source: x264 with 3 B-frames in a pyramid, as Annex-B.
    static func source(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("source.264").path
        let encode = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                                                    "testsrc2=size=320x240:rate=30", "-t", "10", "-c:v", "libx264", "-preset", "veryfast",
                                                    "-bf", "3", "-x264-params", "b-pyramid=normal", "-g", "60", "-f", "h264", "-y", path])
        try #require(encode.status == 0, "\(encode.stderr)")
        return path
    }

    /// What Chromium reported of `file`: played to the end, then seeked to 5 s.
    struct Playback: Decodable {
        var duration: Double
        var ended: Bool
        var decodedFrames: Int
        var error: String?
        var seekedTo: Double?
    }

    /// What Chromium reported of `file` (`Scripts/chromium-play.py`): played to its end, then
    /// seeked to `seek` s; through MSE when `mse`.
    static func play(_ file: String, mse: Bool, seek: Double = 5) throws -> Playback {
        let script = TestFixtures.packageRoot.appendingPathComponent("Scripts/chromium-play.py").path
        let run = try Subprocess.run("timeout", ["90", "/usr/bin/python3", script, file, "--seek", "\(seek)", "--timeout", "60"] + (mse ? ["--mse"] : []))
        try #require(run.status == 0, "chromium-play.py: status \(run.status): \(run.stderr)")
        return try JSONDecoder().decode(Playback.self, from: Data(run.stdout))
    }

    @Test(arguments: [(false, false), (true, true), (true, false)])
    func chromiumPlaysAConvertedBFrameStreamToTheEnd(fragmented: Bool, mse: Bool) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(in: directory)
        let output = directory.appendingPathComponent(fragmented ? "fragmented.mp4" : "progressive.mp4").path
        let convert = try Subprocess.run("timeout", ["60", CLI.executable.path, "convert", source, "-o", output]
                                         + (fragmented ? ["--fragmented"] : []))
        try #require(convert.status == 0, "\(convert.stderr)")
        let playback = try Self.play(output, mse: mse)
        #expect(playback.error == nil, "\(playback.error ?? "")")
        #expect(playback.ended, "did not play to the end: \(playback)")
        // To the frame: 300 frames at 30 fps are 10 s (see above for `<video src>` of a fragmented file).
        if !fragmented || mse {
            #expect(abs(playback.duration - Self.seconds) < 0.5 / Self.framesPerSecond, "duration \(playback.duration)")
        }
        #expect(playback.decodedFrames == Int(Self.seconds * Self.framesPerSecond), "\(playback.decodedFrames) frames decoded")
        let seeked = try #require(playback.seekedTo, "no seek")
        #expect(abs(seeked - 5) < 1 / Self.framesPerSecond, "seeked to \(seeked)")
    }
}
