import Foundation
import H264TestSupport
import Testing

/// `h264 transcode`: the output is read by FFmpeg, with every frame, close to the input.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct TranscodeCommandTests {
    static func ffmpegRaw(_ path: String) throws -> [UInt8] {
        let result = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test(arguments: [["--preset", "veryfast", "--allow-frame-reordering"], ["--session-preset", "live-capture", "--crf", "18"]])
    func transcodesEveryFrame(_ options: [String]) throws {
        let path = try TestFixtures.path("conformance/CABA3_SVA_B.264")   // 176x144, 33 frames, Main
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.h264").path
        let result = try CLI.run(["transcode", path, "-o", out, "--quiet"] + options)
        #expect(result.status == 0, "\(result.stderr)")
        let original = try Self.ffmpegRaw(path)
        let transcoded = try Self.ffmpegRaw(out)
        let frameBytes = 176 * 144 * 3 / 2
        #expect(original.count == 33 * frameBytes)
        #expect(transcoded.count == original.count)
        // Luma PSNR of each frame against FFmpeg's decode of the input.
        for frame in 0..<min(original.count, transcoded.count) / frameBytes {
            let luma = psnr(original[(frame * frameBytes)...], transcoded[(frame * frameBytes)...], count: 176 * 144)
            #expect(luma >= 30, "frame \(frame): \(luma) dB")
        }
    }

    /// An H.265 input (told from its NAL headers) is decoded by libavcodec's HEVC decoder and
    /// encoded to H.264: every frame, each close to FFmpeg's decode of the input.
    @Test func transcodesH265ToH264() throws {
        let path = try TestFixtures.path("hevc/main_gop_bframes_cra.265")   // 320x180, 60 frames, B-frames, CRA
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.h264").path
        let result = try CLI.run(["transcode", path, "-o", out, "--quiet", "--crf", "16"])
        #expect(result.status == 0, "\(result.stderr)")
        let codec = try Subprocess.run("/usr/bin/env", ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", out])
        #expect(String(decoding: codec.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "h264")
        let original = try Self.ffmpegRaw(path), transcoded = try Self.ffmpegRaw(out)
        let frameBytes = 320 * 180 * 3 / 2
        #expect(original.count == 60 * frameBytes && transcoded.count == original.count)
        for frame in 0..<min(original.count, transcoded.count) / frameBytes {
            let luma = psnr(original[(frame * frameBytes)...], transcoded[(frame * frameBytes)...], count: 320 * 180)
            #expect(luma >= 30, "frame \(frame): \(luma) dB")
        }
    }

    /// `--size` scales every picture (libyuv's box filter) before encoding: FFmpeg reads every
    /// frame at the new size, and each is close to FFmpeg's own box-filtered scaling of the input.
    @Test func sizeScalesEveryFrame() throws {
        let path = try TestFixtures.path("conformance/CABA3_SVA_B.264")   // 176x144, 33 frames
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.h264").path
        let result = try CLI.run(["transcode", path, "-o", out, "--quiet", "--size", "88x72", "--crf", "12"])
        #expect(result.status == 0, "\(result.stderr)")
        let probe = try Subprocess.run("/usr/bin/env", ["ffprobe", "-v", "error", "-select_streams", "v:0",
                                                        "-show_entries", "stream=width,height", "-of", "csv=p=0", out])
        #expect(probe.stdout.isEmpty == false && String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "88,72")
        let reference = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-vf", "scale=88:72:flags=area",
                                                            "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]).stdout
        let transcoded = try Self.ffmpegRaw(out)
        let frameBytes = 88 * 72 * 3 / 2
        #expect(reference.count == 33 * frameBytes)
        #expect(transcoded.count == reference.count)
        for frame in 0..<min(reference.count, transcoded.count) / frameBytes {
            let luma = psnr(reference[(frame * frameBytes)...], transcoded[(frame * frameBytes)...], count: 88 * 72)
            #expect(luma >= 28, "frame \(frame): \(luma) dB against FFmpeg's scaling")
        }
        let odd = try CLI.run(["transcode", path, "-o", out, "--quiet", "--size", "87x72"])
        #expect(odd.status != 0 && odd.stderr.contains("--size"))
    }

    /// 10-bit H.264 to H.264 (x264 here is 8-bit): one line naming `--codec hevc`; 4:2:2 (10-bit
    /// H.265 range extensions) to either: one line naming what transcode takes.
    @Test(arguments: [("conformance/PPH10I1_Panasonic_A.264", [], "add --codec hevc"),
                      ("hevc/rext_422_10.265", ["--codec", "hevc"], "transcode takes 8-bit or 10-bit 4:2:0")])
    func refusesWhatItCannotEncode(fixture: String, arguments: [String], says: String) throws {
        let path = try TestFixtures.path(fixture)
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["transcode", path, "-o", directory.appendingPathComponent("out").path, "--quiet"] + arguments)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("h264 transcode: error: ") && result.stderr.contains(says), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }
}
