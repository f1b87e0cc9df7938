import Foundation
import Testing
import H264
import H264TestSupport
import MediaContainers

/// `h264 convert --to flv` and FLV input, checked against FFmpeg: ffprobe reads what we write,
/// and we read what FFmpeg's FLV muxer writes.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct FLVConvertTests {
    static let bFrames = "flv/x264_bframes_320x192_9f.264"
    static let bFramesMKV = "flv/x264_bframes_320x192_9f.mkv"
    /// The B-frame fixture and conformance streams with (CABA3, HPCA) and without B-frames, and
    /// with many parameter sets (MPS: a sequence header at each change).
    static let streams = [bFrames, "conformance/CABA3_SVA_B.264", "conformance/HPCA_BRCM_C.264", "conformance/BA1_FT_C.264",
                          "conformance/MPS_MW_A.264"]

    static func ffprobe(_ arguments: [String]) throws -> String {
        let output = try Subprocess.run("ffprobe", ["-v", "error"] + arguments)
        #expect(output.status == 0, "ffprobe: \(output.stderr)")
        return String(decoding: output.stdout, as: UTF8.self)
    }

    /// `pts,dts` of each packet, in file order.
    static func packetTimes(_ path: String) throws -> [(pts: Int, dts: Int)] {
        try ffprobe(["-show_entries", "packet=pts,dts", "-of", "csv=p=0", path]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",").compactMap { Int($0) }
            return fields.count == 2 ? (fields[0], fields[1]) : nil
        }
    }

    static func convert(_ arguments: [String]) throws -> CLI.Result {
        let result = try CLI.run(["convert"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return result
    }

    /// ffprobe reads our FLV with the source's dimensions, every frame, and presentation times
    /// that come out of the decoder strictly increasing by one frame duration — which they do
    /// only when the composition times put the B-frames in their place.
    @Test(arguments: streams)
    func ffprobeReadsOurFLV(stream: String) throws {
        let input = try TestFixtures.path(stream)
        let flv = try CLI.temporaryDirectory().appendingPathComponent("out.flv").path
        _ = try Self.convert(["--to", "flv", input, "-o", flv])

        let size = { (path: String) throws -> String in
            try Self.ffprobe(["-select_streams", "v", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", path])
        }
        let ours = try size(flv)
        #expect(ours.hasPrefix("h264,"))
        #expect(ours == (try size(input)))

        let frames = try Self.ffprobe(["-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", flv])
        let reference = try ffmpegDecode(input)
        #expect(Int(frames.trimmingCharacters(in: .whitespacesAndNewlines)) == reference.frames)

        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", flv, "-f", "framemd5", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let lines = String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        let times = lines.compactMap { Int($0.split(separator: ",")[2].trimmingCharacters(in: .whitespaces)) }
        // The same pictures, in the same order, as FFmpeg decodes from the Annex-B input.
        let raw = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", input, "-f", "framemd5", "-"])
        let rawHashes = String(decoding: raw.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: ",").last! }
        #expect(lines.map { $0.split(separator: ",").last! } == rawHashes)
        #expect(times.count == reference.frames)
        let steps = Set(zip(times, times.dropFirst()).map { $1 - $0 })
        #expect(steps.count == 1 && steps.first! > 0, "presentation steps \(steps.sorted())")
    }

    /// GStreamer (`flvdemux ! h264parse ! avdec_h264`) decodes our FLV: every picture, 320×192
    /// I420, presentation times strictly increasing by one frame duration (12 fps).
    @Test func gstreamerDecodesOurFLV() throws {
        let flv = try CLI.temporaryDirectory().appendingPathComponent("out.flv").path
        _ = try Self.convert(["--to", "flv", try TestFixtures.path(Self.bFrames), "-o", flv])
        let run = try Subprocess.run("gst-launch-1.0", ["filesrc", "location=\(flv)", "!", "flvdemux", "!", "h264parse", "!",
                                                        "avdec_h264", "!", "fakesink", "silent=false", "-v"])
        let text = String(decoding: run.stdout, as: UTF8.self)
        #expect(run.status == 0, "\(run.stderr)")
        // "chain ******* (fakesink0:sink) (92160 bytes, dts: none, pts: 0:00:00.167000000, …"
        let pictures = text.split(separator: "\n").filter { $0.contains("chain") && $0.contains("(92160 bytes") }
        let pts = pictures.compactMap { line -> Int? in
            guard let range = line.range(of: "pts: ") else { return nil }
            let clock = line[range.upperBound...].prefix { $0 != "," }.split(separator: ":")
            guard clock.count == 3, let h = Int(clock[0]), let m = Int(clock[1]), let s = Double(clock[2]) else { return nil }
            return Int(((Double(h * 3600 + m * 60) + s) * 1000).rounded())
        }
        #expect(pts.count == 9, "\(text.suffix(2000))")
        let steps = zip(pts, pts.dropFirst()).map { $1 - $0 }
        #expect(steps.allSatisfy { (83...84).contains($0) }, "\(pts)")
    }

    /// ffprobe reads the signed composition times FLVWriter writes, negative ones included:
    /// every packet's pts and dts are the ones written.
    @Test func ffprobeReadsNegativeCompositionTimes() throws {
        let units = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data(Self.bFrames)).filter(\.hasPicture)
        let format = try #require(units.first?.formatDescription)
        var writer = FLVWriter()
        try writer.appendSequenceHeader(format)
        let times = units.indices.map { (dts: $0 * 100 + 500, pts: $0 * 100 + 500 + [-300, 0, 250, -1][$0 % 4]) }
        for (unit, time) in zip(units, times) {
            try writer.appendFrame(unit.data, isKeyframe: unit.isIDR, decodeTime: Int64(time.dts), presentationTime: Int64(time.pts))
        }
        let flv = try CLI.temporaryDirectory().appendingPathComponent("signed.flv")
        try Data(writer.bytes).write(to: flv)
        let probed = try Self.packetTimes(flv.path)
        #expect(probed.map { [$0.pts, $0.dts] } == times.map { [$0.pts, $0.dts] })
    }

    /// Our presentation times are x264's: each packet's is within 1 ms (rounding) of the one x264
    /// wrote into its Matroska file of the same encode, after both are shifted to start at 0
    /// (Matroska stores presentation times from 0; FLV needs decoding times ≥ 0, so ours begin
    /// at the reordering delay).
    @Test func presentationTimesMatchX264() throws {
        let flv = try CLI.temporaryDirectory().appendingPathComponent("out.flv").path
        _ = try Self.convert(["--to", "flv", try TestFixtures.path(Self.bFrames), "-o", flv])
        let ours = try Self.packetTimes(flv)
        let x264 = try Self.ffprobe(["-show_entries", "packet=pts_time", "-of", "csv=p=0", try TestFixtures.path(Self.bFramesMKV)])
            .split(separator: "\n").compactMap { Double($0) }.map { Int(($0 * 1000).rounded()) }
        #expect(ours.count == 9 && x264.count == 9)
        #expect(ours.contains { $0.pts != $0.dts }, "no B-frame reordering in the fixture")
        #expect(ours.map(\.dts) == (0..<9).map { Int((Double($0) * 1000 / 12).rounded()) }, "12 fps from the VUI")
        // onMetaData: the frame rate and FFmpeg's duration for the same packets (its muxer's
        // -c copy FLV of x264's Matroska), within rounding.
        let rates = try Self.ffprobe(["-select_streams", "v", "-show_entries", "stream=avg_frame_rate", "-of", "csv=p=0", flv])
        #expect(rates.trimmingCharacters(in: .whitespacesAndNewlines) == "12/1")
        let ffmpegFLV = try CLI.temporaryDirectory().appendingPathComponent("ffmpeg.flv").path
        _ = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try TestFixtures.path(Self.bFramesMKV), "-c", "copy", ffmpegFLV])
        let duration = { (path: String) throws -> Double in
            Double(try Self.ffprobe(["-show_entries", "format=duration", "-of", "csv=p=0", path])
                .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        let ourDuration = try duration(flv), theirDuration = try duration(ffmpegFLV)
        #expect(abs(ourDuration - theirDuration) <= 0.002, "\(ourDuration) s vs FFmpeg's \(theirDuration) s")
        let start = ours.map(\.pts).min() ?? 0
        for (index, (a, b)) in zip(ours, x264).enumerated() {
            #expect(abs((a.pts - start) - b) <= 1, "packet \(index): \(a.pts - start) vs x264's \(b)")
        }
    }

    /// FFmpeg's FLV muxer (`-c copy -f flv`, from x264's Matroska of the fixture's encode) read
    /// back gives the fixture's NAL units, access unit by access unit, and ffprobe's times; the
    /// CLI's Annex-B of it decodes to the fixture's pictures.
    @Test func readsFFmpegFLV() throws {
        let dir = try CLI.temporaryDirectory()
        let flv = dir.appendingPathComponent("ffmpeg.flv").path
        let muxed = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try TestFixtures.path(Self.bFramesMKV),
                                                  "-c", "copy", "-f", "flv", flv])
        #expect(muxed.status == 0, "\(muxed.stderr)")
        let contents = try FLVReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: flv))))
        #expect(contents.skippedTags.isEmpty && contents.warnings.isEmpty)
        #expect(contents.formats.count == 1)

        let source = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data(Self.bFrames)).filter(\.hasPicture)
        #expect(contents.frames.count == source.count)
        let isParameterSet = { (unit: ArraySlice<UInt8>) in [7, 8].contains(unit.first! & 0x1F) }
        for (index, (frame, unit)) in zip(contents.frames, source).enumerated() {
            #expect(frame.h264AccessUnit?.nalUnits.filter { !isParameterSet($0) } == unit.nalUnits.filter { !isParameterSet($0) },
                    "access unit \(index)")
            #expect(frame.isKeyframe == unit.isIDR)
        }
        let sourceSets = source.flatMap(\.nalUnits).filter(isParameterSet).map(Array.init)
        let format = try #require(contents.formats.first?.h264)
        #expect(Set(format.sequenceParameterSets + format.pictureParameterSets) == Set(sourceSets))

        let times = try Self.packetTimes(flv) // ffprobe's reading of the same file
        #expect(contents.frames.map { [Int($0.decodeTime), Int($0.presentationTime)] } == times.map { [$0.dts, $0.pts] })
        #expect(contents.frames.contains { $0.compositionTime != 0 })

        let annexB = dir.appendingPathComponent("back.264").path
        _ = try Self.convert(["--to", "annexb", flv, "-o", annexB])
        let md5 = { (path: String) throws -> [Substring] in
            let out = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", path, "-f", "framemd5", "-"])
            return String(decoding: out.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
                .map { $0.split(separator: ",").last! }
        }
        let pictures = try md5(annexB)
        #expect(pictures.count == 9)
        #expect(pictures == (try md5(try TestFixtures.path(Self.bFrames))))
    }

    /// Annex-B → FLV → Annex-B gives the input back byte for byte (the FLV keeps in-band
    /// parameter sets), in both tag syntaxes.
    @Test(arguments: ["legacy", "enhanced"])
    func roundTrip(syntax: String) throws {
        let dir = try CLI.temporaryDirectory()
        let flv = dir.appendingPathComponent("x.flv").path
        let back = dir.appendingPathComponent("x.264").path
        _ = try Self.convert(["--to", "flv", "--flv-syntax", syntax, try TestFixtures.path(Self.bFrames), "-o", flv])
        _ = try Self.convert(["--to", "annexb", flv, "-o", back])
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: back))) == (try TestFixtures.data(Self.bFrames)))
    }

    /// `--fps` sets the frame duration.
    @Test func frameRateOption() throws {
        let flv = try CLI.temporaryDirectory().appendingPathComponent("x.flv").path
        _ = try Self.convert(["--to", "flv", "--fps", "50", try TestFixtures.path(Self.bFrames), "-o", flv])
        #expect(try Self.packetTimes(flv).map(\.dts) == (0..<9).map { $0 * 20 })
    }

    /// A damaged tag is a warning line and the rest is converted; lost framing fails with the
    /// code and the offset.
    @Test func damageAndLostFraming() throws {
        let dir = try CLI.temporaryDirectory()
        let flv = dir.appendingPathComponent("x.flv")
        _ = try Self.convert(["--to", "flv", try TestFixtures.path(Self.bFrames), "-o", flv.path])
        var bytes = [UInt8](try Data(contentsOf: flv))
        var tags: [Int] = []
        var position = 13
        while position + 11 <= bytes.count {
            tags.append(position)
            position += 11 + (Int(bytes[position + 1]) << 16 | Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])) + 4
        }
        // The coded-frames tags (video, AVCPacketType 1); the second one is damaged.
        tags = tags.filter { bytes[$0] == 9 && bytes[$0 + 12] == 1 }
        var damaged = bytes
        damaged[tags[1] + 11 + 5] = 0x7F // first NAL unit length of that frame runs past the tag
        try Data(damaged).write(to: flv)
        let out = dir.appendingPathComponent("x.264").path
        let result = try Self.convert(["--to", "annexb", flv.path, "-o", out])
        #expect(result.stderr.contains("warning: \(flv.path): byte \(tags[1] + 16): lengthPastEnd"), "\(result.stderr)")
        #expect(try ffmpegDecode(out).frames == 8)
        let strictOut = dir.appendingPathComponent("strict.264").path
        let strict = try CLI.run(["convert", "--strict", "--to", "annexb", flv.path, "-o", strictOut])
        #expect(strict.status == 1 && strict.stderr.contains("error: \(flv.path): byte \(tags[1] + 16): lengthPastEnd"), "\(strict.stderr)")
        #expect(!FileManager.default.fileExists(atPath: strictOut))

        bytes[tags[2]] = 0x1F
        try Data(bytes).write(to: flv)
        let fatal = try CLI.run(["convert", "--to", "annexb", flv.path, "-o", out])
        #expect(fatal.status == 1)
        #expect(fatal.stderr.contains("byte \(tags[2])") && fatal.stderr.contains("flvFramingLost"), "\(fatal.stderr)")
    }
}
