import Foundation
import HEVC
import H264TestSupport
import Testing

/// `h264 encode --codec hevc` and `h264 transcode --codec hevc`: H.265 out of the CLI, read by
/// FFmpeg (decoding without a word, ffprobe's profile) on the cars clip; 10-bit y4m input
/// (`C420p10`, made by FFmpeg) gives Main 10.
@Suite(.ownThread, .timeLimit(.minutes(5)))
struct HEVCEncodeCommandTests {
    static let cars = TestFixtures.url("cars_320x240_30f.y4m").path

    /// FFmpeg's decode of an H.265 file to 8-bit I420, and what it printed.
    static func decode(_ path: String) throws -> (frames: [[UInt8]], errors: String) {
        let result = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "hevc", "-i", path,
                                                   "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let size = 320 * 240 * 3 / 2
        let frames = stride(from: 0, to: result.stdout.count - size + 1, by: size).map { Array(result.stdout[$0..<($0 + size)]) }
        return (frames, result.stderr)
    }

    static func profile(_ path: String) throws -> String {
        let result = try Subprocess.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=profile",
                                                    "-of", "default=nw=1:nk=1", path])
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: [8, 10])
    func encodeDecodesInFFmpeg(bitDepth: Int) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var input = Self.cars
        if bitDepth == 10 {
            input = directory.appendingPathComponent("cars10.y4m").path
            let made = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", Self.cars, "-pix_fmt", "yuv420p10le",
                                                     "-f", "yuv4mpegpipe", "-strict", "-1", input])
            try #require(made.status == 0, "\(made.stderr)")
        }
        let out = directory.appendingPathComponent("out.265").path
        let result = try CLI.run(["encode", input, "-o", out, "--codec", "hevc", "--session-preset", "active-transcoding", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let decoded = try Self.decode(out)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.frames.count == 30)
        let quality = psnr(decoded.frames, try TestFixtures.y4mFrames("cars_320x240_30f.y4m").frames)
        #expect(quality >= 32, "\(quality) dB")
        #expect(try Self.profile(out) == (bitDepth == 10 ? "Main 10" : "Main"))
    }

    /// `--format avcc --config-out`: HVCC samples and an `hvcC` our parser reads back, with the
    /// clip's size.
    @Test func hvccWithConfigurationRecord() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.hvcc").path, config = directory.appendingPathComponent("out.hvcC").path
        let result = try CLI.run(["encode", Self.cars, "-o", out, "--codec", "hevc", "--format", "avcc", "--config-out", config,
                                  "--frames", "5", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let record = try HEVCDecoderConfigurationRecord(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: config))))
        #expect(record.sequenceParameterSet.map { "\($0.displayWidth)x\($0.displayHeight)" } == "320x240")
        #expect(record.nalUnitLengthSize == 4)
    }

    /// H.264 in, H.265 out: every frame, decoded by FFmpeg without a word.
    @Test func transcodeToHEVC() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let h264 = directory.appendingPathComponent("in.h264").path, out = directory.appendingPathComponent("out.265").path
        #expect(try CLI.run(["encode", Self.cars, "-o", h264, "--quiet"]).status == 0)
        let result = try CLI.run(["transcode", h264, "-o", out, "--codec", "hevc", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let decoded = try Self.decode(out)
        #expect(decoded.errors.isEmpty && decoded.frames.count == 30, "\(decoded.errors)")
    }

    /// Main 10 in, Main 10 out: `h264 transcode main10_cropped.265 --codec hevc` gives FFmpeg a
    /// Main 10 stream of the input's 30 pictures, `yuv420p10le` at 200×120, within 40 dB of the
    /// input's pictures (FFmpeg's PSNR on the 10-bit samples); into a .264 file without
    /// `--codec hevc` it says what to add and writes nothing.
    @Test func transcodesMain10() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try TestFixtures.path("hevc/main10_cropped.265"), out = directory.appendingPathComponent("out.265").path
        let refused = try CLI.run(["transcode", input, "-o", directory.appendingPathComponent("out.264").path, "--quiet"])
        #expect(refused.status == 1 && refused.stderr.contains("10-bit pictures are encoded as H.265 Main 10: add --codec hevc"),
                "\(refused.stderr)")
        let result = try CLI.run(["transcode", input, "-o", out, "--codec", "hevc", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let probe = try Subprocess.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                                   "stream=codec_name,profile,pix_fmt,width,height,nb_read_frames", "-of", "csv=p=0", out])
        #expect(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                == "hevc,Main 10,200,120,yuv420p10le,30", "\(probe.stderr)")
        let psnr = try Subprocess.run("ffmpeg", ["-nostdin", "-i", out, "-i", input, "-lavfi", "psnr", "-f", "null", "-"])
        let average = psnr.stderr.split(separator: " ").first { $0.hasPrefix("average:") }
            .flatMap { Double($0.dropFirst("average:".count)) }
        #expect((average ?? 0) >= 40, "\(psnr.stderr.suffix(300))")
    }

    /// `h264 serve --codec hevc --rtsp`: the live H.265 encode served over RTSP; FFmpeg plays
    /// it over TCP as H.265 (RFC 7798) and decodes 20 pictures without a word.
    @Test func serveOverRTSP() throws {
        let server = try LoggingProcess(executable: CLI.executable, ["serve", Self.cars, "--loop", "--port", "0", "--rtsp", "127.0.0.1:0",
                                                                     "--codec", "hevc", "--quiet"],
                                        untilListening: "rtsp")
        defer { server.kill() }
        let port = try #require(server.listeningPort(scheme: "rtsp"), "\(server.stderr)")
        let url = "rtsp://127.0.0.1:\(port)/live"
        let decode = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                    "-frames:v", "20", "-f", "framemd5", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        #expect(String(decoding: decode.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 20)
        let probe = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-select_streams", "v:0",
                                                   "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url])
        #expect(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "hevc,320,240",
                "\(probe.stderr)")
    }

    /// An unknown codec and an H.264 profile name for H.265 are refused.
    @Test func refusals() throws {
        let codec = try CLI.run(["encode", Self.cars, "-o", "/dev/null", "--codec", "vp9"])
        #expect(codec.status != 0 && codec.stderr.contains("unknown codec vp9"), "\(codec.stderr)")
        let profile = try CLI.run(["encode", Self.cars, "-o", "/dev/null", "--codec", "hevc", "--profile", "high"])
        #expect(profile.status != 0 && profile.stderr.contains("main, main10"), "\(profile.stderr)")
    }
}
