import ArgumentParser
import Foundation
import H264
@testable import h264
import H264TestSupport
import Testing

/// The CLI keeps FFmpeg users' habits (issue 33): what an FFmpeg user types works as they
/// expect it to, and the spellings it replaces keep working.
@Suite(.ownThread, .timeLimit(.minutes(5)))
struct FFmpegHabitsTests {
    static let cars = TestFixtures.url("cars_320x240_30f.y4m").path
    static let x264Presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]

    // MARK: Bit rates

    @Test(arguments: [("800000", 800_000), ("500k", 500_000), ("800K", 800_000), ("2M", 2_000_000), ("1.5M", 1_500_000),
                      ("0.5k", 500), ("64k", 64_000), ("1G", 1_000_000_000), ("1", 1), ("2.5", 3)])
    func bitRateParses(text: String, bitsPerSecond: Int) throws {
        #expect(try BitRateArgument(parsing: text).bitsPerSecond == bitsPerSecond)
        #expect(BitRateArgument(argument: text)?.bitsPerSecond == bitsPerSecond)
    }

    @Test(arguments: ["", "k", "M", "2m", "abc", "-5k", "+5k", "1e6", "0", "0k", "0.0001k", "1.2.3M", "2 M", " 2M", "M2", "2MB", "2kk",
                      "5x", ".", "inf", "nan", "9999999G"])
    func bitRateRefuses(text: String) {
        #expect(throws: BitRateArgument.ParseError.self) { try BitRateArgument(parsing: text) }
        #expect(BitRateArgument(argument: text) == nil)
    }

    /// `--bitrate` reaches the configuration in bits per second; a bad value's error names the
    /// option and the value (and lowercase m says to write M).
    @Test func bitRateOption() throws {
        #expect(try EncodeOptions.parse(["--bitrate", "500k"]).configuration(frameRate: 30).averageBitRate == 500_000)
        #expect(try EncodeOptions.parse(["--bitrate", "1.5M"]).configuration(frameRate: 30).averageBitRate == 1_500_000)
        #expect(try EncodeOptions.parse(["--bitrate", "2000000"]).configuration(frameRate: 30).averageBitRate == 2_000_000)
        for bad in ["2x", "2m", "0"] {
            do {
                _ = try EncodeOptions.parse(["--bitrate", bad])
                Issue.record("--bitrate \(bad) was accepted")
            } catch {
                let message = EncodeOptions.message(for: error)
                #expect(message.contains("--bitrate") && message.contains("'\(bad)'"), "\(message)")
            }
        }
        let result = try CLI.run(["encode", Self.cars, "-o", "/dev/null", "--bitrate", "2m"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("The value '2m' is invalid for '--bitrate <bitrate>'") && result.stderr.contains("write M"),
                "\(result.stderr)")
    }

    // MARK: Codec from the output's extension

    @Test(arguments: [("x.265", VideoCodec.hevc), ("x.hevc", .hevc), ("x.h265", .hevc), ("dir/X.HEVC", .hevc), (".265", .hevc),
                      ("x.264", .h264), ("x.h264", .h264), ("x", .h264), ("-", .h264), ("x.mp4", .h264), ("dir.265/x", .h264),
                      ("x.265.264", .h264), ("x.2650", .h264)])
    func codecFollowsExtension(path: String, codec: VideoCodec) throws {
        #expect(EncodeOptions.codec(forOutput: path) == codec)
        #expect(try EncodeOptions.parse([]).configuration(frameRate: 30, output: path).codec == codec)
    }

    /// `--codec` wins over the extension, both ways; without an output (serve) the default is H.264.
    @Test func explicitCodecWins() throws {
        #expect(try EncodeOptions.parse(["--codec", "h264"]).configuration(frameRate: 30, output: "x.265").codec == .h264)
        #expect(try EncodeOptions.parse(["--codec", "hevc"]).configuration(frameRate: 30, output: "x.264").codec == .hevc)
        #expect(try EncodeOptions.parse([]).configuration(frameRate: 30).codec == .h264)
    }
}
