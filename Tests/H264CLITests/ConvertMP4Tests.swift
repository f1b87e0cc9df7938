import Foundation
import H264
import H264TestSupport
import MediaContainers
import Testing

/// `h264 convert` to and from MP4, the output's form told by its extension (issue 36), against
/// FFmpeg: what we write decodes to the source's pictures (framemd5, without an error line) at
/// the source's frame times (ffprobe) with the sample entry players want, and GStreamer's
/// `qtdemux` decodes every picture; what we read back is the Annex-B FFmpeg's
/// `h264_mp4toannexb` gives. Every program runs under `timeout`.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct ConvertMP4Tests {
    static func run(_ program: String, _ arguments: [String]) throws -> Subprocess.Output {
        try Subprocess.run("timeout", ["60", program] + arguments)
    }

    /// FFmpeg's framemd5 of `path`'s video, its lines without the header, and its error lines.
    static func framemd5(_ path: String) throws -> (lines: [String], errors: String) {
        let output = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        // Each line is "stream, dts, pts, duration, size, md5": the pictures are compared by their md5s.
        let md5s = String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
        return (md5s, output.stderr)
    }

    /// A 2 s x264 stream with 3 B-frames in a pyramid (or H.265 with libx265), as Annex-B.
    static func source(_ directory: URL, hevc: Bool) throws -> String {
        let path = directory.appendingPathComponent(hevc ? "source.265" : "source.264").path
        let codec = hevc ? ["-c:v", "libx265", "-x265-params", "bframes=3:log-level=error"]
            : ["-c:v", "libx264", "-bf", "3", "-x264-params", "b-pyramid=normal"]
        let encode = try run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2"]
                             + codec + ["-g", "30", "-f", hevc ? "hevc" : "h264", "-y", path])
        try #require(encode.status == 0, "\(encode.stderr)")
        return path
    }

    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func convertToMP4ByExtensionDecodesToTheSourcesPictures(hevc: Bool, fragmented: Bool) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory, hevc: hevc)
        let output = directory.appendingPathComponent("out.mp4").path
        let convert = try Self.run(CLI.executable.path, ["convert", source, "-o", output] + (fragmented ? ["--fragmented"] : []))
        try #require(convert.status == 0, "\(convert.stderr)")
        let expected = try Self.framemd5(source), written = try Self.framemd5(output)
        #expect(written.errors.isEmpty, "\(written.errors)")
        #expect(written.lines.count == 60 && written.lines == expected.lines, "\(written.lines.count) pictures, the source's \(expected.lines.count)")
        let probe = try Self.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", output])
        #expect(probe.stdout == Array((hevc ? "hvc1\n" : "avc1\n").utf8), "\(String(decoding: probe.stdout, as: UTF8.self))")
    }

    /// The streams issue 36 names: x264 with 3 B-frames in a pyramid, alone, with four slices a
    /// picture, at an odd size (318x238, so the SPS carries a crop window), with an open GOP
    /// (non-IDR I pictures every 30 frames, B-frames referencing across them); x265 with 3
    /// B-frames.
    enum Form: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case bFramePyramid, slices, cropping, openGOP, hevc
        var testDescription: String { rawValue }
        var size: String { self == .cropping ? "318x238" : "320x240" }
        var encoder: [String] {
            switch self {
            case .bFramePyramid, .cropping: ["-c:v", "libx264", "-bf", "3", "-x264-params", "b-pyramid=normal"]
            case .slices: ["-c:v", "libx264", "-bf", "3", "-x264-params", "b-pyramid=normal:slices=4"]
            case .openGOP: ["-c:v", "libx264", "-bf", "3", "-x264-params", "b-pyramid=normal:open-gop=1:keyint=30"]
            case .hevc: ["-c:v", "libx265", "-x265-params", "bframes=3:log-level=error"]
            }
        }
        /// GStreamer's parser and decoder of the form's codec.
        var gstreamerCodec: String { self == .hevc ? "h265" : "h264" }
    }

    /// ffprobe's presentation times (seconds) of the decoded pictures of `path`, in output order.
    static func pictureTimes(_ path: String) throws -> [Double] {
        let probe = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path])
        try #require(probe.status == 0, "ffprobe: \(probe.stderr)")
        return String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").compactMap { $0.split(separator: ",").first.flatMap { Double($0) } }
    }

    /// The pictures GStreamer decodes from `path` (`qtdemux ! h264parse ! avdec_h264 ! fakesink`,
    /// or `h265parse ! avdec_h265`), counted from `fakesink`'s chain messages.
    static func gstreamerPictures(_ path: String, codec: String) throws -> Int {
        let result = try run("gst-launch-1.0", ["filesrc", "location=\(path)", "!", "qtdemux", "!", "\(codec)parse", "!", "avdec_\(codec)", "!",
                                                "fakesink", "silent=false", "-v"])
        try #require(result.status == 0, "gst-launch-1.0: \(result.stderr)")
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").filter { $0.contains("fakesink0: last-message = chain") }.count
    }

    /// The form's 2 s source (30 fps, keyint 30) converted to MP4 (or fragmented MP4) in
    /// `directory`: the source's path and the MP4's.
    static func converted(_ form: Form, fragmented: Bool, in directory: URL) throws -> (source: String, mp4: String) {
        let source = directory.appendingPathComponent(form == .hevc ? "source.265" : "source.264").path
        let encode = try run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(form.size):rate=30", "-t", "2"]
                             + form.encoder + ["-g", "30", "-f", form == .hevc ? "hevc" : "h264", "-y", source])
        try #require(encode.status == 0, "\(encode.stderr)")
        let output = directory.appendingPathComponent("out.mp4").path
        let convert = try run(CLI.executable.path, ["convert", source, "-o", output] + (fragmented ? ["--fragmented"] : []))
        try #require(convert.status == 0, "\(convert.stderr)")
        return (source, output)
    }

    @Test(arguments: Form.allCases, [false, true])
    func convertedStreamDecodesToTheSourcesFramesInFFmpegAndGStreamer(_ form: Form, fragmented: Bool) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (source, output) = try Self.converted(form, fragmented: fragmented, in: directory)
        let expected = try Self.framemd5(source), written = try Self.framemd5(output)
        #expect(written.errors.isEmpty, "\(written.errors)")
        #expect(written.lines.count == 60 && written.lines == expected.lines, "\(written.lines.count) pictures, the source's \(expected.lines.count)")
        #expect(try Self.gstreamerPictures(output, codec: form.gstreamerCodec) == 60)
    }

    /// ffprobe's picture times of the progressive MP4 are the source's frame times, n/30 s
    /// (ffprobe prints six decimals).
    @Test(arguments: Form.allCases) func convertedStreamPresentsAtTheSourcesFrameTimes(_ form: Form) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let times = try Self.pictureTimes(try Self.converted(form, fragmented: false, in: directory).mp4)
        #expect(times.count == 60 && zip(times, 0...).allSatisfy { abs($0 - Double($1) / 30) < 0.000_001 }, "\(times)")
    }

    /// The fragmented MP4 starts composition at the decoding time with `trun` v1's negative
    /// offsets and no edit list, as MSE needs (with an edit list of `media_time` 2/30 s added to
    /// such a file, Chromium 156's MSE played 1.93 s and decoded 30 of its 60 frames). FFmpeg
    /// 5.1 reads such fragments by moving every
    /// presentation time later by the most negative offset (its `dts_shift`), here x264's
    /// pyramid's (and x265's) reorder delay of two frames: ffprobe's picture times are the
    /// source's, n/30 s, plus 2/30 s, evenly spaced.
    @Test(arguments: Form.allCases)
    func fragmentedStreamPresentsAtTheSourcesFrameTimesPlusFFmpegsReorderDelay(_ form: Form) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let times = try Self.pictureTimes(try Self.converted(form, fragmented: true, in: directory).mp4)
        #expect(times.count == 60 && zip(times, 2...).allSatisfy { abs($0 - Double($1) / 30) < 0.000_001 }, "\(times)")
    }

    @Test func convertFromMP4ByExtensionGivesFFmpegsAnnexB() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory, hevc: false)
        let mp4 = directory.appendingPathComponent("ffmpeg.mp4").path
        let mux = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-i", source, "-c", "copy", "-y", mp4])
        try #require(mux.status == 0, "\(mux.stderr)")
        let output = directory.appendingPathComponent("back.264").path
        let convert = try Self.run(CLI.executable.path, ["convert", mp4, "-o", output])
        try #require(convert.status == 0, "\(convert.stderr)")
        let ffmpeg = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-i", mp4, "-c:v", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", "-"])
        func units(_ bytes: [UInt8]) -> [[UInt8]] { AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) } }
        let ours = units(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))), theirs = units(ffmpeg.stdout)
        // FFmpeg's bitstream filter puts the parameter sets before each IDR as we do; the units are compared.
        #expect(ours.count > 60 && ours == theirs, "\(ours.count) NAL units, FFmpeg's \(theirs.count)")
    }

    /// The streamed conversions of a file (FLV → MP4 fed to `MP4Writer` 1 MiB at a time, MP4 →
    /// Annex-B sample by sample) give the bytes of their slow twins: the whole file read by
    /// `FLVReader.read` into `MP4Writer`, and `MP4Reader.annexB(fromMP4:)` of the whole file (also
    /// what `--strict` runs).
    @Test func streamedConversionsGiveTheWholeFileBytes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let flv = directory.appendingPathComponent("in.flv").path
        let encode = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                             "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "3", "-c:v", "libx264", "-bf", "3",
                                             "-g", "30", "-c:a", "aac", "-f", "flv", "-y", flv])
        try #require(encode.status == 0, "\(encode.stderr)")
        let streamed = directory.appendingPathComponent("streamed.mp4").path, whole = directory.appendingPathComponent("whole.mp4").path
        let convert = try Self.run(CLI.executable.path, ["convert", flv, "-o", streamed])
        try #require(convert.status == 0, "\(convert.stderr)")
        let writer = try MP4Writer(path: whole)
        for frame in try FLVReader.read([UInt8](Data(contentsOf: URL(fileURLWithPath: flv)))).frames { try writer.append(frame.frame) }
        try writer.finish()
        let mp4 = try [UInt8](Data(contentsOf: URL(fileURLWithPath: streamed)))
        let wholeMP4 = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        #expect(mp4.count > 10_000 && mp4 == wholeMP4)
        let back = directory.appendingPathComponent("back.264").path, strict = directory.appendingPathComponent("strict.264").path
        try #require(try Self.run(CLI.executable.path, ["convert", streamed, "-o", back]).status == 0)
        try #require(try Self.run(CLI.executable.path, ["convert", "--strict", streamed, "-o", strict]).status == 0)
        let expected = try MP4Reader.annexB(fromMP4: MP4MemorySource(mp4)).bytes
        let backBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: back)))
        let strictBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: strict)))
        #expect(expected.count > 10_000 && backBytes == expected)
        #expect(strictBytes == expected)
    }

    @Test func inspectListsAnMP4sTracks() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(directory, hevc: true)
        let output = directory.appendingPathComponent("out.mp4").path
        try #require(try Self.run(CLI.executable.path, ["convert", source, "-o", output]).status == 0)
        let inspect = try Self.run(CLI.executable.path, ["inspect", output])
        let text = String(decoding: inspect.stdout, as: UTF8.self)
        #expect(inspect.status == 0 && text.hasPrefix("track 0: video hevc 320x240 (hvc1), 2.000 s, 60 frames, config "), "\(text)\(inspect.stderr)")
    }

    @Test func anOutputWithoutAKnownExtensionNeedsTo() throws {
        let result = try Self.run(CLI.executable.path, ["convert", "in.264", "-o", "out.bin"])
        #expect(result.status != 0 && result.stderr.contains("--to"), "\(result.stderr)")
    }
}
