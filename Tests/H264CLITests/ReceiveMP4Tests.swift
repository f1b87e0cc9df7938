import Foundation
import H264TestSupport
import Testing

/// `h264 receive rtsp://… -o x.mp4` (issue 36): a camera recorded as MP4 with its audio, a
/// clean stop finalised with the index at the front, and a recorder killed with SIGKILL leaving a
/// file FFmpeg plays up to its last whole fragment (half a second at most is lost). Every program runs under `timeout` or a time limit.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct ReceiveMP4Tests {
    /// ffprobe's `entries` of `path` as CSV lines.
    static func probe(_ path: String, _ entries: [String]) throws -> [[String]] {
        let probe = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error"] + entries + ["-of", "csv=p=0", path])
        return String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
    }

    /// The types of the file's top-level boxes, in order.
    static func topLevelBoxes(_ path: String) throws -> [String] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var types: [String] = [], at = 0
        while at + 8 <= bytes.count {
            var size = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            if size == 1, at + 16 <= bytes.count { size = bytes[(at + 8)..<(at + 16)].reduce(0) { $0 << 8 | Int($1) } }
            types.append(String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self))
            guard size >= 8 else { break }
            at += size
        }
        return types
    }

    /// FFmpeg decodes `path` whole: its error lines, and the video frames it decoded.
    static func decode(_ path: String) throws -> (errors: String, videoFrames: Int) {
        let run = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-f", "framecrc", "-"])
        let frames = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count
        let audio = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        return (run.stderr + audio.stderr, frames)
    }

    @Test(arguments: [("aac", "aac"), ("pcma", "aac"), ("opus", "opus")])
    func aCameraWithAudioIsRecordedToAnMP4ThatScrubs(audio: String, stored: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try GStreamerRTSPServer(["--audio", audio])
        defer { camera.kill() }
        let output = directory.appendingPathComponent("camera.mp4").path
        let received = try CLI.run(["receive", camera.url, "-o", output, "--frames", "150", "--idle-timeout", "10"])
        #expect(received.status == 0, "\(received.stderr)")
        // Finalised: the index before the media, nothing else left beside it.
        let boxes = try Self.topLevelBoxes(output)
        #expect(boxes == ["ftyp", "moov", "mdat"], "\(boxes)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["camera.mp4"])
        let streams = try Self.probe(output, ["-show_entries", "stream=codec_type,codec_name,codec_tag_string"])
        #expect(streams.map { $0.joined(separator: "/") }.sorted() == ["\(stored)/audio/\(stored == "aac" ? "mp4a" : "Opus")", "h264/video/avc1"].sorted(),
                "\(streams)")
        let decoded = try Self.decode(output)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.videoFrames == 150, "\(decoded.videoFrames) pictures")
        // Both tracks span the recording: durations within 200 ms of each other.
        let durations = try Self.probe(output, ["-show_entries", "stream=codec_type,duration"])
        let video = try #require(durations.first { $0.first == "video" }.flatMap { Double($0[1]) })
        let sound = try #require(durations.first { $0.first == "audio" }.flatMap { Double($0[1]) })
        #expect(video >= 4.9 && abs(video - sound) <= 0.2, "video \(video) s, audio \(sound) s")
    }

    @Test func aRecorderKilledAfter12SecondsLeavesAtLeast11SecondsFFmpegPlays() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try GStreamerRTSPServer(["--audio", "aac"])
        defer { camera.kill() }
        let output = directory.appendingPathComponent("camera.mp4").path
        let recorder = try LoggingProcess(executable: CLI.executable, ["receive", camera.url, "-o", output], untilEvent: "playing")
        defer { recorder.kill() }
        try #require(!recorder.events(named: "playing").isEmpty, "\(recorder.stderr)")
        // The recording starts at the camera's next IDR (1 s GOPs), when the recorder creates the file.
        let deadline = Date().addingTimeInterval(15)
        while !FileManager.default.fileExists(atPath: output) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        try #require(FileManager.default.fileExists(atPath: output), "\(recorder.stderr)")
        // The recording's length, not a synchronisation: 12 s of a 30 fps camera.
        Thread.sleep(forTimeInterval: 12)
        recorder.kill()
        _ = recorder.waitForExit(timeout: 10)
        #expect(try Self.topLevelBoxes(output).prefix(2) == ["ftyp", "moov"])
        let decoded = try Self.decode(output)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.videoFrames >= 11 * 30, "\(decoded.videoFrames) pictures")
        let streams = try Self.probe(output, ["-show_entries", "stream=codec_name"]).map(\.first)
        #expect(streams == ["h264", "aac"], "\(streams)")
    }

    @Test func segmentsOfFourSecondsEachStartAtAKeyframeAndHoldBothTracks() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try GStreamerRTSPServer(["--audio", "aac"])
        defer { camera.kill() }
        let pattern = directory.appendingPathComponent("rec-%03d.mp4").path
        let received = try CLI.run(["receive", camera.url, "-o", pattern, "--segment-duration", "4", "--frames", "360", "--idle-timeout", "10"])
        #expect(received.status == 0, "\(received.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files.count >= 3 && files.first == "rec-001.mp4", "\(files)")
        var pictures = 0
        for file in files {
            let path = directory.appendingPathComponent(file).path
            let decoded = try Self.decode(path)
            #expect(decoded.errors.isEmpty, "\(file): \(decoded.errors)")
            pictures += decoded.videoFrames
            let first = try Self.probe(path, ["-select_streams", "v", "-show_entries", "packet=flags", "-read_intervals", "%+#1"])
            #expect(first.first?.first?.hasPrefix("K") == true, "\(file) starts with \(first)")
            let streams = try Self.probe(path, ["-show_entries", "stream=codec_name"]).compactMap(\.first)
            #expect(streams == ["h264", "aac"], "\(file): \(streams)")
        }
        #expect(pictures == 360, "\(pictures) pictures in \(files.count) files")
    }
}
