import Foundation
import H264
import H264TestSupport
import Testing

/// `h264 decode` of every kind of stream against FFmpeg: `--format raw` writes the native pixel
/// format byte for byte as `ffmpeg -f rawvideo` does (planar GBR, 4:0:0, 4:2:2 and 4:4:4 at 8
/// and 10 bits); y4m refuses what FFmpeg's yuv4mpegpipe muxer refuses, in one line naming the
/// format, and writes what it accepts as FFmpeg writes it.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct DecodePixelFormatTests {
    /// A stream: a fixture (less a leading header), or made now from FFmpeg's `testsrc` by
    /// `ffmpeg ARGUMENTS -f h264`, libx264 or libx264rgb.
    struct Stream: Sendable, CustomTestStringConvertible {
        var name: String
        var fixture: String?
        var skip = 0
        var ffmpegArguments: [String] = []
        /// The pixel format FFmpeg decodes it to (ffprobe's `pix_fmt`).
        var pixelFormat: String
        /// The SPS's `chroma_format_idc`.
        var chromaFormatIdc: Int
        var testDescription: String { "\(name) (\(pixelFormat))" }

        /// Writes the stream into `directory` and returns its path.
        func make(in directory: URL) throws -> String {
            let path = directory.appendingPathComponent("\(name).264").path
            if let fixture {
                try Data(try TestFixtures.data(fixture).dropFirst(skip)).write(to: URL(fileURLWithPath: path))
            } else {
                let made = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi",
                                                               "-i", "testsrc=size=66x38:rate=25", "-frames:v", "5"]
                                              + ffmpegArguments + ["-f", "h264", path])
                #expect(made.status == 0, "\(made.stderr)")
            }
            return path
        }
    }

    static let gbrRegression = Stream(name: "gbr-regression", fixture: "regressions/decoder-gbr-444-planes.bin", skip: 8,
                                      pixelFormat: "gbrp", chromaFormatIdc: 3)
    static let gbr8 = Stream(name: "gbr8", ffmpegArguments: ["-c:v", "libx264rgb"], pixelFormat: "gbrp", chromaFormatIdc: 3)
    static let gbr10 = Stream(name: "gbr10", ffmpegArguments: ["-pix_fmt", "yuv444p10le", "-c:v", "libx264", "-colorspace", "rgb"],
                              pixelFormat: "gbrp10le", chromaFormatIdc: 3)
    /// 4:0:0: libavcodec outputs it as 4:2:0 with grey chroma (x264 marks the 8-bit one full range).
    static let mono8 = Stream(name: "mono8", ffmpegArguments: ["-pix_fmt", "gray", "-c:v", "libx264"], pixelFormat: "yuvj420p", chromaFormatIdc: 0)
    static let mono10 = Stream(name: "mono10", ffmpegArguments: ["-pix_fmt", "gray10le", "-c:v", "libx264"],
                               pixelFormat: "yuv420p10le", chromaFormatIdc: 0)
    static let yuv444p10 = Stream(name: "yuv444p10", ffmpegArguments: ["-pix_fmt", "yuv444p10le", "-c:v", "libx264"],
                                  pixelFormat: "yuv444p10le", chromaFormatIdc: 3)
    static let yuv422p10 = Stream(name: "high422-10bit", fixture: "x264/high422_10bit_tff_80x44.264", pixelFormat: "yuv422p10le", chromaFormatIdc: 2)
    static let yuv444p = Stream(name: "high444", fixture: "x264/high444_cqmjvt_80x44.264", pixelFormat: "yuv444p", chromaFormatIdc: 3)

    /// ffprobe's pixel format and the SPS's `chroma_format_idc` of a stream: the case is what it says.
    static func checkStream(_ stream: Stream, at path: String) throws {
        let probe = try Subprocess.run("/usr/bin/env", ["ffprobe", "-v", "error", "-select_streams", "v:0",
                                                        "-show_entries", "stream=pix_fmt", "-of", "csv=p=0", path])
        #expect(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == stream.pixelFormat)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let sps = try #require(AnnexB.nalUnits(in: bytes).first { bytes[$0.range.lowerBound] & 0x1F == 7 })
        #expect(try SequenceParameterSet(nalUnit: bytes[sps.range]).chromaFormatIdc == stream.chromaFormatIdc)
    }

    @Test(arguments: [gbrRegression, gbr8, gbr10, mono8, mono10, yuv422p10, yuv444p, yuv444p10])
    func rawMatchesFFmpegRawvideo(_ stream: Stream) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try stream.make(in: directory)
        try Self.checkStream(stream, at: path)
        let out = directory.appendingPathComponent("out.raw").path
        let ours = try CLI.run(["decode", path, "--format", "raw", "-o", out, "--quiet"])
        #expect(ours.status == 0, "\(ours.stderr)")
        let ffmpeg = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-"])
        #expect(ffmpeg.status == 0, "\(ffmpeg.stderr)")
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(!written.isEmpty)
        #expect(written.count == ffmpeg.stdout.count)
        #expect(written == ffmpeg.stdout)
    }

    /// Planar RGB: FFmpeg's yuv4mpegpipe muxer refuses it; so does `h264 decode`, in one line.
    @Test(arguments: [gbrRegression, gbr10])
    func y4mRefusesPlanarRGB(_ stream: Stream) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try stream.make(in: directory)
        let ours = try CLI.run(["decode", path, "-o", directory.appendingPathComponent("out.y4m").path, "--quiet"])
        #expect(ours.status == 1)
        #expect(ours.stderr == "h264 decode: error: y4m cannot hold \(stream.pixelFormat) (planar RGB): use --format raw\n")
        let ffmpeg = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-strict", "-1",
                                                         "-f", "yuv4mpegpipe", "-"])
        #expect(ffmpeg.status != 0)
        #expect(ffmpeg.stdout.isEmpty)
    }

    /// What y4m holds (with FFmpeg's `-strict -1` for more than 8 bits) is written as FFmpeg's
    /// yuv4mpegpipe muxer writes it, `XCOLORRANGE=FULL` for the full-range 4:0:0 stream included.
    @Test(arguments: [mono8, mono10, yuv444p, yuv444p10])
    func y4mMatchesFFmpeg(_ stream: Stream) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try stream.make(in: directory)
        let out = directory.appendingPathComponent("out.y4m").path
        let ours = try CLI.run(["decode", path, "-o", out, "--quiet"])
        #expect(ours.status == 0, "\(ours.stderr)")
        let ffmpeg = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-strict", "-1",
                                                         "-f", "yuv4mpegpipe", "-"])
        #expect(ffmpeg.status == 0, "\(ffmpeg.stderr)")
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(!written.isEmpty)
        #expect(written == ffmpeg.stdout)
    }

    /// The forced interleaved and packed outputs cannot go to y4m either: one line naming them.
    @Test(arguments: [("nv12", "interleaved chroma"), ("bgra", "packed RGB")])
    func y4mRefusesForcedNV12AndBGRA(_ format: String, _ kind: String) throws {
        let path = try TestFixtures.path("conformance/BA_MW_D.264")
        let ours = try CLI.run(["decode", path, "--pixel-format", format, "-o", "/dev/null", "--quiet"])
        #expect(ours.status != 0)
        #expect(ours.stderr.contains("y4m cannot hold \(format) (\(kind)): use --format raw"), "\(ours.stderr)")
    }
}
