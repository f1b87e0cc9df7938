import Foundation
import H264TestSupport
import Testing

/// Runs a program with optional standard input; collects standard output and error.
private func run(_ executable: String, _ arguments: [String], stdin: [UInt8]? = nil) throws -> (status: Int32, stdout: [UInt8], stderr: String) {
    let output = try Subprocess.run(executable, arguments, stdin: stdin)
    return (output.status, output.stdout, output.stderr)
}

private func h264(_ arguments: [String], stdin: [UInt8]? = nil) throws -> (status: Int32, stdout: [UInt8], stderr: String) {
    try run(CLI.executable.path, ["encode"] + arguments, stdin: stdin)
}

private func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("h264-encode-tests-\(UUID().uuidString)-\(name)").path
}

/// Decodes with FFmpeg (the reference decoder) to raw I420: the frames and FFmpeg's error output.
private func decode(_ path: String, width: Int = 320, height: Int = 240, format: String = "h264") throws -> (frames: [[UInt8]], errors: String) {
    let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-f", format, "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
    let size = width * height * 3 / 2
    let frames = stride(from: 0, to: result.stdout.count - size + 1, by: size).map { Array(result.stdout[$0..<($0 + size)]) }
    return (frames, result.stderr)
}

/// Committed fixture: Fixtures/cars_320x240_30f.y4m (see Fixtures/PROVENANCE), the cars clip.
private let y4mPath = TestFixtures.url("cars_320x240_30f.y4m").path
/// Its 30 frames of I420; a missing fixture throws ``FixtureMissing`` naming the file.
private func reference() throws -> [[UInt8]] { try TestFixtures.y4mFrames("cars_320x240_30f.y4m").frames }
/// The same frames as a raw I420 file in a temporary folder (the caller removes it).
private func rawCarsFile() throws -> String {
    let path = temporaryPath("cars_320x240.i420")
    try Data(try reference().joined()).write(to: URL(fileURLWithPath: path))
    return path
}

/// Annex-B with the SEI NAL units (type 6) removed: x264's CLI writes a ~700-byte SEI with its
/// version and options that a library user does not get.
private func withoutSEI(_ stream: [UInt8]) -> Int {
    var starts: [Int] = []
    var i = 0
    while i + 3 <= stream.count {
        if stream[i] == 0, stream[i + 1] == 0, stream[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
    }
    var total = stream.count
    for (k, s) in starts.enumerated() where s < stream.count && stream[s] & 0x1F == 6 {
        let end = k + 1 < starts.count ? starts[k + 1] - 3 : stream.count
        total -= end - s + 3
    }
    return total
}

@Suite(.ownThread, .timeLimit(.minutes(5)))
struct EncodeCommandTests {
    @Test(arguments: ["file", "stdin", "raw"])
    func encodesAndFFmpegDecodes(input: String) throws {
        let out = temporaryPath("out.h264")
        let rawPath = try rawCarsFile()
        defer { for path in [out, rawPath] { try? FileManager.default.removeItem(atPath: path) } }
        let result: (status: Int32, stdout: [UInt8], stderr: String)
        switch input {
        case "file": result = try h264([y4mPath, "-o", out])
        case "stdin":
            // What `ffmpeg -f yuv4mpegpipe -` writes.
            let y4m = try run("ffmpeg", ["-nostdin", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "320x240", "-r", "30",
                                         "-i", rawPath, "-f", "yuv4mpegpipe", "-"])
            try #require(y4m.status == 0)
            result = try h264(["-", "-o", out, "--session-preset", "live-capture"], stdin: y4m.stdout)
        default: result = try h264([rawPath, "--size", "320x240", "--fps", "30", "-o", out, "--profile", "main"])
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("encoded 30 frames 320x240"), "\(result.stderr)")
        let decoded = try decode(out)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.frames.count == 30)
        #expect(psnr(decoded.frames, try reference()) >= 32)
    }

    @Test func avccWithConfigurationRecordAndFrameLimit() throws {
        let out = temporaryPath("out.avcc"), config = temporaryPath("out.avcC")
        defer { try? FileManager.default.removeItem(atPath: out); try? FileManager.default.removeItem(atPath: config) }
        let result = try h264([y4mPath, "-o", out, "--format", "avcc", "--config-out", config, "--frames", "10",
                               "--profile", "baseline", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let avcC = [UInt8](try Data(contentsOf: URL(fileURLWithPath: config)))
        // ISO/IEC 14496-15 5.3.3.1: configurationVersion 1, AVCProfileIndication 66 (Baseline).
        #expect(avcC.first == 1)
        #expect(avcC.count > 7 && avcC[1] == 66)
        // Length-prefixed data: walk it; every length must fit.
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        var i = 0, slices = 0
        while i + 4 <= data.count {
            let n = Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3])
            #expect(i + 4 + n <= data.count)
            if [1, 5].contains(data[i + 4] & 0x1F) { slices += 1 }
            i += 4 + n
        }
        #expect(i == data.count)
        #expect(slices == 10)
    }

    /// Same y4m and settings as `x264 --preset P --tune T --crf Q`: size within 2% (x264's
    /// informational SEI aside) and PSNR within 2%, both measured with FFmpeg's decode.
    @Test(arguments: [("medium", "film", "23"), ("veryfast", "zerolatency", "28"), ("slow", "animation", "20")])
    func matchesX264(preset: String, tune: String, crf: String) throws {
        let ours = temporaryPath("ours.h264"), theirs = temporaryPath("x264.h264")
        defer { try? FileManager.default.removeItem(atPath: ours); try? FileManager.default.removeItem(atPath: theirs) }
        let x264 = try run("x264", ["--quiet", "--preset", preset, "--tune", tune, "--crf", crf, "-o", theirs, y4mPath])
        try #require(x264.status == 0, "\(x264.stderr)")
        let result = try h264([y4mPath, "-o", ours, "--preset", preset, "--tune", tune, "--crf", crf, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let oursBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ours)))
        let theirBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: theirs)))
        let (a, b) = (Double(withoutSEI(oursBytes)), Double(withoutSEI(theirBytes)))
        #expect(abs(a - b) / b <= 0.02, "ours \(a), x264 \(b)")
        let (da, db) = (try decode(ours), try decode(theirs))
        #expect(da.errors.isEmpty && db.errors.isEmpty)
        #expect(da.frames.count == 30 && db.frames.count == 30)
        let (pa, pb) = (psnr(da.frames, try reference()), psnr(db.frames, try reference()))
        #expect(abs(pa - pb) / pb <= 0.02, "ours \(pa) dB, x264 \(pb) dB")
    }

    static let badInputs: [(String, [UInt8]?, String)] = [
        ("missing file", nil, "no such file"),
        ("empty", [], "no y4m header"),
        ("not y4m", Array("RIFF1234\n".utf8), "YUV4MPEG2"),
        ("4:4:4", Array("YUV4MPEG2 W16 H16 F30:1 C444\n".utf8), "unsupported chroma format C444"),
        ("mono", Array("YUV4MPEG2 W16 H16 F30:1 Cmono\n".utf8), "unsupported chroma format Cmono"),
        ("no width", Array("YUV4MPEG2 H16 F30:1\n".utf8), "no width"),
        ("odd size", Array("YUV4MPEG2 W15 H16 F30:1\n".utf8), "even"),
        ("bad rate", Array("YUV4MPEG2 W16 H16 F30:0\n".utf8), "frame rate"),
        ("interlaced", Array("YUV4MPEG2 W16 H16 F30:1 It\n".utf8), "interlaced"),
        ("truncated frame", Array("YUV4MPEG2 W16 H16 F30:1\nFRAME\n".utf8) + [UInt8](repeating: 128, count: 100), "truncated"),
        ("no FRAME", Array("YUV4MPEG2 W16 H16 F30:1\nFRAMX\n".utf8) + [UInt8](repeating: 128, count: 384), "FRAME"),
        ("no frames", Array("YUV4MPEG2 W16 H16 F30:1\n".utf8), "no frames"),
    ]

    @Test(arguments: badInputs.indices)
    func badInputFailsWithOneLine(index: Int) throws {
        let (name, bytes, expected) = Self.badInputs[index]
        let input = temporaryPath("bad.y4m"), out = temporaryPath("bad.h264")
        defer { try? FileManager.default.removeItem(atPath: input); try? FileManager.default.removeItem(atPath: out) }
        if let bytes { _ = FileManager.default.createFile(atPath: input, contents: Data(bytes)) }
        let result = try h264([input, "-o", out])
        #expect(result.status == 1, "\(name)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(name): \(result.stderr)")
        #expect(result.stderr.hasPrefix("h264 encode: error:"), "\(name): \(result.stderr)")
        #expect(result.stderr.contains(expected), "\(name): \(result.stderr)")
    }

    @Test func truncatedRawInputAndBadOptions() throws {
        let input = temporaryPath("raw.i420"), out = temporaryPath("raw.h264")
        defer { try? FileManager.default.removeItem(atPath: input); try? FileManager.default.removeItem(atPath: out) }
        _ = FileManager.default.createFile(atPath: input, contents: Data(repeating: 16, count: 384 + 10))
        let truncated = try h264([input, "--size", "16x16", "--fps", "30", "-o", out])
        #expect(truncated.status == 1)
        #expect(truncated.stderr.contains("frame 2 has 10 of 384 bytes"), "\(truncated.stderr)")
        let badCRF = try h264([y4mPath, "-o", out, "--crf", "60"])
        #expect(badCRF.status == 1)
        #expect(badCRF.stderr.contains("constantRateFactor"), "\(badCRF.stderr)")
        let badLimit = try h264([y4mPath, "-o", out, "--data-rate-limit", "1000"])
        #expect(badLimit.status == 1)
        #expect(badLimit.stderr.contains("BYTES:SECONDS"), "\(badLimit.stderr)")
    }
}
