import AudioCodecs
import Foundation
import H264
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// The MP4 writers against FFmpeg 5.1 and GStreamer: x264 and x265 streams with B-frames
/// (3, pyramid) made into frames (`MP4Conversion.frames(fromAnnexB:frameRate:)`), written as
/// progressive MP4 (``MP4Writer``) and fragmented MP4 (``FragmentedMP4FileWriter``); FFmpeg
/// decodes each to the source's pictures (framemd5) without an error line, and ffprobe's
/// timestamps are the source's frame times. Every program runs under `timeout`.
@Suite(.ownThread) struct MP4WriterPeerTests {
    /// Runs `program` under `timeout 60`.
    static func run(_ program: String, _ arguments: [String]) throws -> Subprocess.Output {
        try Subprocess.run("timeout", ["60", program] + arguments)
    }

    /// A fresh path in the temporary directory.
    static func temporaryPath(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("mp4-writer-\(UUID().uuidString)\(suffix)").path
    }

    /// The 30 frames of `cars_320x240_30f.y4m` encoded by x264 with 3 B-frames, pyramid, an IDR
    /// every 12 frames: the Annex-B file's path.
    static func x264Stream() throws -> String {
        let path = temporaryPath(".264")
        let result = try run("x264", ["--quiet", "--bframes", "3", "--b-pyramid", "normal", "--keyint", "12", "--min-keyint", "12",
                                      "--no-scenecut", "-o", path, try TestFixtures.path("cars_320x240_30f.y4m")])
        try #require(result.status == 0, "x264: \(result.stderr)")
        return path
    }

    /// Two seconds of `testsrc` at 25 fps encoded by FFmpeg's libx265 with 3 B-frames: the
    /// Annex-B file's path.
    static func x265Stream() throws -> String {
        let path = temporaryPath(".265")
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=192x128:rate=25", "-t", "2",
                                        "-c:v", "libx265", "-x265-params", "bframes=3:keyint=25:min-keyint=25:scenecut=0:log-level=error",
                                        "-f", "hevc", path])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return path
    }

    /// The picture MD5s of `ffmpeg -f framemd5` of `path`'s first video stream, every decoded
    /// picture (`-fps_mode passthrough`: the raw H.264 demuxer's guessed times would make FFmpeg
    /// drop pictures at a splice), and its error lines.
    static func frameMD5s(_ path: String) throws -> (md5s: [String], errors: String) {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                                        "-f", "framemd5", "-"])
        #expect(result.status == 0)
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        return (lines.compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }, result.stderr)
    }

    /// ffprobe's packet `pts_time`s of the first video stream, in presentation order, and its `dts_time`s.
    static func probedTimes(_ path: String) throws -> (pts: [Double], dts: [Double]) {
        let result = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,dts_time",
                                         "-of", "csv=p=0", path])
        try #require(result.status == 0, "ffprobe: \(result.stderr)")
        let rows = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",") }
        return (rows.compactMap { $0.first.flatMap { Double($0) } }.sorted(), rows.compactMap { $0.last.flatMap { Double($0) } })
    }

    /// `ffprobe -show_entries stream=…` of `path`: one value per stream.
    static func probedStreams(_ path: String, _ entry: String) throws -> [String] {
        let result = try run("ffprobe", ["-v", "error", "-show_entries", "stream=\(entry)", "-of", "csv=p=0", path])
        try #require(result.status == 0, "ffprobe: \(result.stderr)")
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Writes `frames` as a progressive or a fragmented MP4 and returns its path.
    static func write(_ frames: [CompressedFrame], fragmented: Bool, options: MP4ProgressiveMuxer.Options = .init()) throws -> String {
        let path = temporaryPath(fragmented ? "-frag.mp4" : ".mp4")
        if fragmented {
            var formats: [MediaFormatDescription] = []
            if let video = frames.first(where: { $0.videoFormat != nil }) { formats.append(video.format) }
            if let audio = frames.first(where: { $0.audioFormat != nil }) { formats.append(audio.format) }
            let writer = try FragmentedMP4FileWriter(path: path, formats: formats,
                                                     options: .init(videoTimescale: options.videoTimescale, hevcEntry: options.hevcEntry))
            for frame in frames { try writer.append(frame) }
            try writer.finish()
        } else {
            let writer = try MP4Writer(path: path, options: options)
            for frame in frames { try writer.append(frame) }
            #expect(FileManager.default.fileExists(atPath: writer.mediaDataPath))
            try writer.finish()
            #expect(!FileManager.default.fileExists(atPath: writer.mediaDataPath), "the temporary media data is removed")
        }
        return path
    }

    /// FFmpeg decodes the MP4 and the fragmented MP4 of `source` (Annex-B) to the source's
    /// pictures, without an error line, and ffprobe's presentation times are n/fps.
    static func checkAgainstSource(_ source: String, frameRate: FrameRate, codecTag: String, forms: [Bool] = [false, true]) throws {
        let frames = try MP4Conversion.frames(fromAnnexB: Array(try Data(contentsOf: URL(fileURLWithPath: source))), frameRate: frameRate)
        #expect(frames.contains { $0.presentationTime != $0.decodeTime }, "the stream has B-frames")
        let expected = try frameMD5s(source)
        #expect(expected.errors.isEmpty)
        #expect(expected.md5s.count == frames.count)
        for fragmented in forms {
            let path = try write(frames, fragmented: fragmented)
            defer { if ProcessInfo.processInfo.environment["MP4_KEEP"] == nil { try? FileManager.default.removeItem(atPath: path) } }
            let decoded = try frameMD5s(path)
            #expect(decoded.errors.isEmpty, "\(fragmented ? "fragmented" : "progressive"): \(decoded.errors)")
            #expect(decoded.md5s == expected.md5s, "\(fragmented ? "fragmented" : "progressive") pictures")
            let times = try probedTimes(path)
            let expectedTimes = (0..<frames.count).map { Double($0) * Double(frameRate.denominator) / Double(frameRate.numerator) }
            #expect(times.pts.count == expectedTimes.count)
            // FFmpeg's mov demuxer adds the largest negative composition offset of a track to
            // every pts of it (`mov_update_dts_shift`), so a fragmented file's first frame, which
            // presents at 0 (trun version 1), is printed at that offset: compare from the first.
            let shift = fragmented ? times.pts.first ?? 0 : 0
            #expect(zip(times.pts, expectedTimes).allSatisfy { abs($0 - shift - $1) < 0.0005 }, "\(fragmented): pts \(times.pts)")
            #expect(zip(times.dts, times.dts.dropFirst()).allSatisfy { $0 < $1 }, "dts increase")
            #expect(try probedStreams(path, "codec_tag_string") == [codecTag])
            // The duration to the frame: the frames times the frame duration (ffprobe prints µs).
            let duration = Double(frames.count * frameRate.denominator) / Double(frameRate.numerator)
            let probed = try probedStreams(path, "duration").compactMap(Double.init)
            #expect(probed.count == 1 && abs(probed[0] - duration) < 0.000_001, "\(fragmented): duration \(probed)")
            if !fragmented { #expect(try probedStreams(path, "start_time") == ["0.000000"]) }
        }
    }

    @Test func x264BFramesMatchTheSource() throws {
        let source = try Self.x264Stream()
        defer { try? FileManager.default.removeItem(atPath: source) }
        try Self.checkAgainstSource(source, frameRate: FrameRate(numerator: 25, denominator: 1), codecTag: "avc1")
    }

    @Test func x264AtNTSCRateMatchesTheSource() throws {
        let source = try Self.x264Stream()
        defer { try? FileManager.default.removeItem(atPath: source) }
        try Self.checkAgainstSource(source, frameRate: FrameRate(numerator: 30000, denominator: 1001), codecTag: "avc1")
    }

    @Test func x265BFramesMatchTheSourceAsHVC1() throws {
        let source = try Self.x265Stream()
        defer { try? FileManager.default.removeItem(atPath: source) }
        try Self.checkAgainstSource(source, frameRate: FrameRate(numerator: 25, denominator: 1), codecTag: "hvc1")
        // hev1 on request: FFmpeg names it and decodes the same pictures.
        let frames = try MP4Conversion.frames(fromAnnexB: Array(try Data(contentsOf: URL(fileURLWithPath: source))), frameRate: nil)
        let path = try Self.write(frames, fragmented: false, options: .init(hevcEntry: .hev1))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try Self.probedStreams(path, "codec_tag_string") == ["hev1"])
        let decoded = try Self.frameMD5s(path)
        #expect(decoded.errors.isEmpty)
        #expect(decoded.md5s == (try Self.frameMD5s(source)).md5s)
    }

    /// A new SPS mid-stream (the x264 stream, then FFmpeg's libx264 at another size): the
    /// progressive MP4 has two sample descriptions, and FFmpeg decodes it to the source's
    /// pictures (the fragmented writer starts another file instead: not tested here).
    @Test func formatChangeMidStreamMatchesTheSource() throws {
        let first = try Self.x264Stream()
        defer { try? FileManager.default.removeItem(atPath: first) }
        let made = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x96:rate=25", "-t", "1",
                                           "-c:v", "libx264", "-bf", "3", "-g", "25", "-f", "h264", "-"])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        let source = Self.temporaryPath(".264")
        defer { try? FileManager.default.removeItem(atPath: source) }
        try Data(Array(try Data(contentsOf: URL(fileURLWithPath: first))) + made.stdout).write(to: URL(fileURLWithPath: source))
        let frames = try MP4Conversion.frames(fromAnnexB: Array(try Data(contentsOf: URL(fileURLWithPath: source))),
                                              frameRate: FrameRate(numerator: 25, denominator: 1))
        #expect(Set(frames.map(\.format)).count == 2)
        try Self.checkAgainstSource(source, frameRate: FrameRate(numerator: 25, denominator: 1), codecTag: "avc1", forms: [false])
    }

    /// The fragmented file writer writes the frames before a format change, then refuses the
    /// frame with `mp4WriterState` (one initialization segment a file); FFmpeg decodes what
    /// was written. Both writers refuse frames after `finish()`.
    @Test func fileWritersRefuseWhatTheyCannotWrite() throws {
        let source = try Self.x264Stream()
        defer { try? FileManager.default.removeItem(atPath: source) }
        let frames = try MP4Conversion.frames(fromAnnexB: Array(try Data(contentsOf: URL(fileURLWithPath: source))),
                                              frameRate: FrameRate(numerator: 25, denominator: 1))
        let other = try #require(try MP4Conversion.frames(fromAnnexB: TestFixtures.data("x264/vui_hrd_high_160x96.264"), frameRate: nil).first)
        let path = Self.temporaryPath("-frag.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try FragmentedMP4FileWriter(path: path, formats: [frames[0].format])
        for frame in frames.prefix(12) { try writer.append(frame) }
        var changed = other
        changed.decodeTime = frames[12].decodeTime
        changed.presentationTime = frames[12].presentationTime
        let error = #expect(throws: MediaError.self) { try writer.append(changed) }
        #expect(error?.code == .mp4WriterState)
        try writer.finish()
        #expect(throws: MediaError.self) { try writer.append(frames[12]) }
        let decoded = try Self.frameMD5s(path)
        #expect(decoded.errors.isEmpty)
        #expect(decoded.md5s.count == 12)
        let progressive = try MP4Writer(path: Self.temporaryPath(".mp4"))
        try progressive.finish()
        defer { try? FileManager.default.removeItem(atPath: progressive.path) }
        #expect(throws: MediaError.self) { try progressive.append(frames[0]) }
    }

    /// GStreamer's `qtdemux` with `avdec_h264` and `avdec_h265` decodes every picture of both
    /// forms (counted from `fakesink`'s chain messages).
    @Test(arguments: ["h264", "h265"]) func gstreamerDecodesEveryFrame(codec: String) throws {
        let source = try codec == "h264" ? Self.x264Stream() : Self.x265Stream()
        defer { try? FileManager.default.removeItem(atPath: source) }
        let frames = try MP4Conversion.frames(fromAnnexB: Array(try Data(contentsOf: URL(fileURLWithPath: source))),
                                              frameRate: FrameRate(numerator: 25, denominator: 1))
        for fragmented in [false, true] {
            let path = try Self.write(frames, fragmented: fragmented)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try Self.run("gst-launch-1.0", ["filesrc", "location=\(path)", "!", "qtdemux", "!", "\(codec)parse", "!",
                                                          "avdec_\(codec)", "!", "fakesink", "silent=false", "-v"])
            #expect(result.status == 0, "gst-launch: \(result.stderr)")
            let chains = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").filter { $0.contains("fakesink0: last-message = chain") }
            #expect(chains.count == frames.count, "\(codec) \(fragmented ? "fragmented" : "progressive"): \(chains.count) frames")
        }
    }

    /// The x264 stream with FFmpeg's AAC (split at its ADTS headers): ffprobe sees both streams,
    /// FFmpeg decodes both without an error line, in both forms.
    @Test func videoWithAACPlaysInBothForms() throws {
        let source = try Self.x264Stream()
        defer { try? FileManager.default.removeItem(atPath: source) }
        let video = try MP4Conversion.frames(fromAnnexB: Array(try Data(contentsOf: URL(fileURLWithPath: source))),
                                             frameRate: FrameRate(numerator: 25, denominator: 1))
        let aac = try FLVAudioPeerTests.ffmpegAACFrames()
        let config = AudioSpecificConfig(samplingFrequency: 44_100, channelConfiguration: 1)
        let audio = aac.prefix(52).enumerated().map { index, data in
            CompressedFrame(data: data, format: config.formatDescription, presentationTime: .seconds(1) * (index * 1024) / 44_100)
        }
        let frames = (video + audio).enumerated().sorted { ($0.element.decodeTime, $0.offset) < ($1.element.decodeTime, $1.offset) }.map(\.element)
        for fragmented in [false, true] {
            let path = try Self.write(frames, fragmented: fragmented)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(try FLVAudioPeerTests.probedCodecs(path) == ["h264", "aac"])
            #expect(try FLVAudioPeerTests.decodingErrors(path).isEmpty)
            let counts = try Self.run("ffprobe", ["-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path])
            #expect(String(decoding: counts.stdout, as: UTF8.self).split(separator: "\n") == ["\(video.count)", "\(audio.count)"])
        }
    }
}
