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

    // MARK: Presets

    /// No session preset is spelt like an x264 preset, so `--preset NAME` is never ambiguous.
    @Test func sessionPresetNamesAreNotX264Names() {
        #expect(PresetArgument.allValueStrings == Self.x264Presets)
        #expect(Set(EncodeOptions.Preset.allCases.map(\.rawValue)).isDisjoint(with: Self.x264Presets))
    }

    @Test(arguments: FFmpegHabitsTests.x264Presets)
    func presetTakesX264Names(name: String) throws {
        let options = try EncodeOptions.parse(["--preset", name])
        #expect(options.deprecations.isEmpty)
        #expect(try options.configuration(frameRate: 30).preset?.rawValue == name)
        // With a session preset, --preset overrides only its x264 preset.
        let live = try EncodeOptions.parse(["--session-preset", "live-capture", "--preset", name]).configuration(frameRate: 30)
        #expect(live.preset?.rawValue == name && live.realTime && live.maxKeyFrameIntervalDuration == 2)
    }

    /// The old spelling `--preset SESSION-PRESET` gives what `--session-preset` gives, with one
    /// deprecation line naming the new spelling.
    @Test(arguments: EncodeOptions.Preset.allCases)
    func oldSessionPresetSpelling(preset: EncodeOptions.Preset) throws {
        let old = try EncodeOptions.parse(["--preset", preset.rawValue])
        let new = try EncodeOptions.parse(["--session-preset", preset.rawValue])
        #expect(try old.configuration(frameRate: 30) == new.configuration(frameRate: 30))
        #expect(try old.configuration(frameRate: 30) != EncodeOptions.parse([]).configuration(frameRate: 30))
        #expect(old.deprecations.count == 1)
        #expect(old.deprecations.first?.contains("--session-preset \(preset.rawValue)") == true)
        #expect(new.deprecations.isEmpty)
    }

    @Test func oldSpeedSpelling() throws {
        let old = try EncodeOptions.parse(["--speed", "superfast"])
        #expect(try old.configuration(frameRate: 30).preset?.rawValue == "superfast")
        #expect(old.deprecations == ["--speed superfast is deprecated: write --preset superfast"])
        // Both old spellings together (a script of before): both apply, one line each.
        let both = try EncodeOptions.parse(["--preset", "background-transcoding", "--speed", "fast"])
        let c = try both.configuration(frameRate: 30)
        #expect(c.preset?.rawValue == "fast" && c.threads == 2)
        #expect(both.deprecations.count == 2)
    }

    /// Unknown names and contradicting old and new spellings are refused.
    @Test func presetRefusals() throws {
        for arguments in [["--preset", "fastest"], ["--preset", "liveCapture"], ["--session-preset", "veryfast"],
                          ["--preset", "live-capture", "--session-preset", "live-capture"], ["--speed", "fast", "--preset", "slow"]] {
            #expect(throws: (any Error).self, "\(arguments)") { try EncodeOptions.parse(arguments) }
        }
        #expect(throws: (any Error).self) { try EncodeOptions.parse(["--speed", "fastest"]).configuration(frameRate: 30) }
    }

    /// The old spellings work end to end and print exactly one line on standard error (with
    /// `--quiet`, nothing else): `h264 COMMAND: warning: …`.
    @Test(arguments: [(["--speed", "ultrafast"], ["--preset", "ultrafast"]), (["--preset", "live-capture"], ["--session-preset", "live-capture"])])
    func deprecationLine(old: [String], new: [String]) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("x.264").path
        let result = try CLI.run(["encode", Self.cars, "-o", out, "--frames", "3", "--quiet"] + old)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(result.stderr.hasSuffix("\n") && lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("h264 encode: warning: \(old.joined(separator: " ")) is deprecated: write \(new.joined(separator: " "))") == true,
                "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)).count > 0)
        // The new spelling: not a word.
        let quiet = try CLI.run(["encode", Self.cars, "-o", out, "--frames", "3", "--quiet"] + new)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }

    // MARK: End to end

    /// `h264 encode cars.y4m -o x.265 --bitrate 500k --preset veryfast`: H.265 by the extension
    /// alone, which ffprobe calls hevc and FFmpeg decodes (30 frames) without a word; `2M`
    /// gives a larger file than `500k`, so the suffix reached the encoder.
    @Test func encodeToDot265() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("x.265").path, larger = directory.appendingPathComponent("larger.hevc").path
        let result = try CLI.run(["encode", Self.cars, "-o", out, "--bitrate", "500k", "--preset", "veryfast"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("encoded 30 frames 320x240") && !result.stderr.contains("warning"), "\(result.stderr)")
        let probe = try Subprocess.run("timeout", ["60", "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                                   "stream=codec_name", "-of", "default=nw=1", out])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        #expect(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "codec_name=hevc")
        let decode = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-i", out, "-f", "framemd5", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        #expect(String(decoding: decode.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 30)
        let null = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-i", out, "-f", "null", "-"])
        #expect(null.status == 0 && null.stderr.isEmpty, "\(null.stderr)")

        let second = try CLI.run(["encode", Self.cars, "-o", larger, "--bitrate", "2M", "--preset", "veryfast", "--quiet"])
        #expect(second.status == 0, "\(second.stderr)")
        let size = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        #expect(size(larger) > size(out) * 3 / 2, "2M: \(size(larger)) bytes, 500k: \(size(out)) bytes")
    }

    /// `h264 serve cars.y4m --loop --rtsp 127.0.0.1:0` without `--port`: no raw TCP server
    /// (no tcp:// listening event), and FFmpeg plays the RTSP stream over TCP.
    @Test func serveRTSPWithoutPort() throws {
        let server = try LoggingProcess(executable: CLI.executable, ["serve", Self.cars, "--loop", "--rtsp", "127.0.0.1:0",
                                                                     "--preset", "ultrafast", "--threads", "1", "--quiet"],
                                        untilListening: "rtsp")
        defer { server.kill() }
        let port = try #require(server.listeningPort(scheme: "rtsp"), "\(server.stderr)")
        // The TCP fan-out would have written its listening event before the RTSP server's.
        #expect(server.listeningPort(scheme: "tcp") == nil, "\(server.events)")
        let decode = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp",
                                                    "-i", "rtsp://127.0.0.1:\(port)/live", "-frames:v", "5", "-f", "framemd5", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        #expect(String(decoding: decode.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 5)
        #expect(server.stop() == 0, "\(server.stderr)")
    }

    /// `serve` without any output says to pick one.
    @Test func serveNeedsAnOutput() throws {
        let result = try CLI.run(["serve", Self.cars])
        #expect(result.status != 0)
        #expect(result.stderr.contains("pick an output: --rtsp"), "\(result.stderr)")
        #expect(throws: (any Error).self) { try ServeCommand.parse([Self.cars, "--port", "70000"]) }
        #expect(try ServeCommand.parse([Self.cars, "--rtp", "udp://127.0.0.1:5004"]).network.port == nil)
    }

    // MARK: Help

    /// Every command's help opens with at most 5 lines (abstract and discussion at 80 columns)
    /// before its usage and options.
    @Test func helpOpensShort() throws {
        let commands = H264Command.configuration.subcommands
        #expect(commands.count == 8)
        for command in commands {
            let help = command.helpMessage(columns: 80)
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
            let usage = try #require(lines.firstIndex { $0.hasPrefix("USAGE:") }, "\(help)")
            let opening = lines[..<usage].filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(opening.first?.hasPrefix("OVERVIEW: ") == true, "\(help)")
            #expect(opening.count <= 5, "\(command): \(opening.count) lines\n\(opening.joined(separator: "\n"))")
        }
        let encode = EncodeCommand.helpMessage(columns: 80)
        #expect(encode.contains("--session-preset") && encode.contains("--preset") && !encode.contains("--speed"), "\(encode)")
    }
}
