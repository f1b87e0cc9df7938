import Foundation
import H264TestSupport
import Testing

/// `h264 decode` against FFmpeg on the same files: framemd5 lines, y4m bytes, errors.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct DecodeCommandTests {
    /// A 4:2:0 stream with cropping, a 10-bit 720p stream, field pictures with MBAFF, MBAFF.
    /// H.265, told from the NAL headers without a flag: B-frames with CRA, Main 10 cropped, 4:2:2
    /// 10-bit, and fields.
    @Test(arguments: ["conformance/CVFC1_Sony_C.jsv", "conformance/PPH10I1_Panasonic_A.264", "conformance/FRExt2_Panasonic.avc",
                      "conformance/freh5.264", "hevc/main_gop_bframes_cra.265", "hevc/main10_cropped.265", "hevc/rext_422_10.265",
                      "hevc/interlaced_fields_tff.265"])
    func framemd5MatchesFFmpeg(_ stream: String) throws {
        let path = try TestFixtures.path(stream)
        let ours = try CLI.run(["decode", "--framemd5", "--quiet", path])
        #expect(ours.status == 0, "\(ours.stderr)")
        let ffmpeg = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        func frames(_ text: String) -> [String] {
            text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").suffix(2).joined(separator: ",") }
        }
        func header(_ text: String, _ key: String) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix(key) }.map(String.init)
        }
        let theirs = String(decoding: ffmpeg.stdout, as: UTF8.self)
        #expect(!frames(theirs).isEmpty)
        #expect(frames(ours.stdoutText) == frames(theirs))
        #expect(header(ours.stdoutText, "#dimensions") == header(theirs, "#dimensions"))
    }

    @Test func y4mMatchesFFmpegByteForByte() throws {
        let path = try TestFixtures.path("conformance/CVFC1_Sony_C.jsv")
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out.y4m").path
        let ours = try CLI.run(["decode", path, "-o", out, "--quiet"])
        #expect(ours.status == 0, "\(ours.stderr)")
        let ffmpeg = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "yuv4mpegpipe", "-"])
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(written.count == ffmpeg.stdout.count)
        #expect(written == ffmpeg.stdout)
    }

    @Test func standardInputToRawStandardOutput() throws {
        let bytes = try TestFixtures.data("conformance/BA_MW_D.264")
        let result = try CLI.run(["decode", "-", "--format", "raw", "-o", "-", "--quiet"], stdin: Data(bytes))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.count == 100 * 176 * 144 * 3 / 2)
    }

    @Test func errorsAreOneLine() throws {
        let missing = try CLI.run(["decode", "/nonexistent.h264", "--quiet"])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("h264 decode: error: "))
        #expect(missing.stderr.split(separator: "\n").count == 1)
        let garbage = try CLI.run(["decode", "-", "--quiet"], stdin: Data(repeating: 0x55, count: 1000))
        #expect(garbage.status == 1)
        #expect(garbage.stderr.hasPrefix("h264 decode: error: ") && garbage.stderr.contains("no decodable picture"))
    }
}
