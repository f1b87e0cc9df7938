import Foundation
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// ``MP4Reader`` against FFmpeg 5.1: files FFmpeg's mov muxer writes (progressive, faststart,
/// fragmented with and without default-base-is-moof, `.mov`, H.265 as `hvc1` and `hev1`, AAC
/// audio, B-frames with an edit list) read to the NAL units `h264_mp4toannexb` /
/// `hevc_mp4toannexb` give, the timestamps and keyframe flags ffprobe prints, and the AAC frames
/// FFmpeg copies out. Every program runs under `timeout`.
@Suite(.ownThread) struct MP4ReaderPeerTests {
    /// One file FFmpeg writes: its input arguments, its output arguments and extension.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var input: [String]
        var output: [String]
        var fileExtension = "mp4"
        var isHEVC = false
        var testDescription: String { name }
    }

    static let h264Fixture = "flv/x264_bframes_320x192_9f.264"
    static let h264Copy = ["-c:v", "copy"]

    static let cases: [Case] = [
        Case(name: "x264 B-frames, progressive (moov after mdat)", input: ["-i", fixture(h264Fixture)], output: h264Copy),
        Case(name: "x264 B-frames, faststart", input: ["-i", fixture(h264Fixture)], output: h264Copy + ["-movflags", "+faststart"]),
        Case(name: "x264 B-frames, fragmented", input: ["-i", fixture(h264Fixture)],
             output: h264Copy + ["-movflags", "frag_keyframe+empty_moov"]),
        Case(name: "x264 B-frames, fragmented default-base-is-moof", input: ["-i", fixture(h264Fixture)],
             output: h264Copy + ["-movflags", "+frag_keyframe+empty_moov+default_base_moof"]),
        Case(name: "x264 B-frames, .mov", input: ["-i", fixture(h264Fixture)], output: h264Copy, fileExtension: "mov"),
        Case(name: "x264 VUI HRD high", input: ["-i", fixture("x264/vui_hrd_high_160x96.264")], output: h264Copy),
        Case(name: "conformance CABA3_SVA_B", input: ["-i", fixture("conformance/CABA3_SVA_B.264")], output: h264Copy),
        Case(name: "conformance BA1_FT_C (slices)", input: ["-i", fixture("conformance/BA1_FT_C.264")],
             output: h264Copy + ["-movflags", "frag_keyframe+empty_moov"]),
        Case(name: "H.265 hvc1", input: ["-i", fixture("hevc/main_gop_bframes_cra.265")], output: h264Copy + ["-tag:v", "hvc1"],
             isHEVC: true),
        Case(name: "H.265 hev1, fragmented", input: ["-i", fixture("hevc/slices4_vui_hrd_aud.265")],
             output: h264Copy + ["-tag:v", "hev1", "-movflags", "frag_keyframe+empty_moov+default_base_moof"], isHEVC: true),
        Case(name: "libx264 -bf 3 from testsrc2", input: ["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25", "-t", "2"],
             output: ["-c:v", "libx264", "-bf", "3", "-g", "12", "-preset", "veryfast"]),
        Case(name: "libx264 -bf 3 from testsrc2, fragmented", input: ["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25", "-t", "2"],
             output: ["-c:v", "libx264", "-bf", "3", "-g", "12", "-preset", "veryfast", "-movflags", "frag_keyframe+empty_moov"]),
        Case(name: "libx264 -bf 3, negative_cts_offsets (ctts v1)",
             input: ["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25", "-t", "2"],
             output: ["-c:v", "libx264", "-bf", "3", "-g", "12", "-preset", "veryfast", "-movflags", "+negative_cts_offsets"]),
        Case(name: "libx264 -bf 3, fragmented negative_cts_offsets (trun v1)",
             input: ["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25", "-t", "2"],
             output: ["-c:v", "libx264", "-bf", "3", "-g", "12", "-preset", "veryfast",
                      "-movflags", "+frag_keyframe+empty_moov+default_base_moof+negative_cts_offsets"]),
    ]

    static func fixture(_ path: String) -> String { TestFixtures.url(path).path }

    /// Runs `program` under `timeout 60`.
    static func run(_ program: String, _ arguments: [String]) throws -> Subprocess.Output {
        try Subprocess.run("timeout", ["60", program] + arguments)
    }

    /// A fresh path in the temporary directory.
    static func temporaryPath(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("mp4-read-\(UUID().uuidString).\(suffix)").path
    }

    /// The file FFmpeg writes for `testCase`.
    static func write(_ testCase: Case) throws -> String {
        let path = temporaryPath(testCase.fileExtension)
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + testCase.input + testCase.output + [path])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return path
    }

    /// The NAL units of FFmpeg's `*_mp4toannexb` output of the file's video.
    static func ffmpegNALUnits(_ path: String, hevc: Bool) throws -> [[UInt8]] {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-c:v", "copy",
                                        "-bsf:v", hevc ? "hevc_mp4toannexb" : "h264_mp4toannexb", "-f", hevc ? "hevc" : "h264", "-"])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return AnnexB.nalUnits(in: result.stdout).map { Array(result.stdout[$0.range]) }
    }

    /// ffprobe's packets of one stream: pts, dts (in the stream's time base, the track's
    /// timescale) and whether the K flag is set, in file order.
    static func probedPackets(_ path: String, stream: String) throws -> [(pts: Int64, dts: Int64, key: Bool)] {
        let result = try run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts,dts,flags",
                                         "-of", "csv=p=0", path])
        try #require(result.status == 0, "ffprobe: \(result.stderr)")
        return try String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            try #require(fields.count >= 3, "ffprobe line \(line)")
            return (try #require(Int64(fields[0])), try #require(Int64(fields[1])), fields[2].hasPrefix("K"))
        }
    }

    /// True for a parameter set NAL unit (H.264 SPS/PPS, H.265 VPS/SPS/PPS), which FFmpeg's
    /// bitstream filters may place elsewhere than our conversion.
    static func isParameterSet(_ unit: [UInt8], hevc: Bool) -> Bool {
        guard let first = unit.first else { return false }
        return hevc ? (32...34).contains(Int(first >> 1 & 0x3F)) : [7, 8].contains(first & 0x1F)
    }

    /// Every frame of the file's video track and the reader's warnings, read from a file source.
    static func ourVideoFrames(_ path: String) throws -> (frames: [MP4Frame], reader: MP4Reader) {
        var reader = try MP4Reader(source: try MP4FileSource(path: path))
        let video = try #require(reader.tracks.first { $0.handlerType == "vide" })
        var frames: [MP4Frame] = []
        while let frame = try reader.next() {
            if frame.trackID == video.trackID { frames.append(frame) }
        }
        return (frames, reader)
    }

    @Test(arguments: cases) func videoMatchesFFmpeg(_ testCase: Case) throws {
        let path = try Self.write(testCase)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (frames, reader) = try Self.ourVideoFrames(path)
        #expect(reader.warnings.isEmpty, "\(reader.warnings)")
        if testCase.name.contains("fragmented") { #expect(reader.isFragmented) }
        if testCase.fileExtension == "mov" { #expect(reader.majorBrand == "qt  ") }
        try #require(!frames.isEmpty)
        // The NAL units, parameter sets set apart.
        var ours: [[UInt8]] = []
        for frame in frames {
            let format = try #require(frame.frame.videoFormat)
            #expect(format.codec == (testCase.isHEVC ? .hevc : .h264))
            let annexB = try format.annexB(fromSample: frame.data, lengthSize: 4, withParameterSets: frame.isKeyframe)
            ours += AnnexB.nalUnits(in: annexB).map { Array(annexB[$0.range]) }
        }
        let theirs = try Self.ffmpegNALUnits(path, hevc: testCase.isHEVC)
        let ourSlices = ours.filter { !Self.isParameterSet($0, hevc: testCase.isHEVC) }
        let theirSlices = theirs.filter { !Self.isParameterSet($0, hevc: testCase.isHEVC) }
        #expect(ourSlices.count == theirSlices.count)
        #expect(ourSlices == theirSlices)
        #expect(Set(ours.filter { Self.isParameterSet($0, hevc: testCase.isHEVC) })
            == Set(theirs.filter { Self.isParameterSet($0, hevc: testCase.isHEVC) }))
        // The timestamps and keyframes.
        let packets = try Self.probedPackets(path, stream: "v:0")
        #expect(packets.count == frames.count)
        for (frame, packet) in zip(frames, packets) {
            #expect(frame.presentationTimestamp == packet.pts && frame.decodeTimestamp == packet.dts && frame.isKeyframe == packet.key,
                    "ours pts \(frame.presentationTimestamp) dts \(frame.decodeTimestamp) key \(frame.isKeyframe), ffprobe \(packet)")
            let time = frame.frame.decodeTime.components
            let nanoseconds = time.seconds * 1_000_000_000 + time.attoseconds / 1_000_000_000
            #expect(abs(nanoseconds - frame.decodeTimestamp * 1_000_000_000 / Int64(frame.timescale)) <= 1)
        }
    }

    /// The B-frame sources start presenting at 0 and decode before it: the edit list's shift.
    @Test func bFramesShiftedByTheEditList() throws {
        let path = try Self.write(Self.cases[10])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (frames, reader) = try Self.ourVideoFrames(path)
        #expect(reader.tracks[0].editShift < 0)
        #expect(frames.map(\.presentationTimestamp).min() == 0)
        #expect(frames[0].decodeTimestamp < 0)
        #expect(frames.count == 50)
    }

    /// A fragmented recording cut off inside a fragment (a recorder killed mid-write): the whole
    /// fragments before the cut are read, frame for frame as in the whole file, and the cut is a
    /// warning, not an error.
    @Test func cutOffFragmentedFileKeepsWholeFragments() throws {
        let path = try Self.write(Self.cases[11])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let whole = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        var full = try MP4Reader(whole), all: [MP4Frame] = []
        while let frame = try full.next() { all.append(frame) }
        var cut = try MP4Reader(Array(whole.prefix(whole.count * 7 / 10))), kept: [MP4Frame] = []
        while let frame = try cut.next() { kept.append(frame) }
        #expect(!kept.isEmpty && kept.count < all.count)
        #expect(kept == Array(all.prefix(kept.count)))
        #expect(cut.warnings.contains { $0.code == .truncated || $0.code == .mp4SamplePastEnd })
    }

    /// H.264 and AAC in one file, progressive and fragmented: the audio frames are FFmpeg's
    /// (`-c:a copy -f adts`, headers removed), timed as ffprobe says, interleaved with the video
    /// by decoding time.
    @Test(arguments: [[String](), ["-movflags", "frag_keyframe+empty_moov+default_base_moof"]])
    func aacMatchesFFmpeg(_ flags: [String]) throws {
        let path = Self.temporaryPath("mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let made = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25",
                                           "-f", "lavfi", "-i", "sine=f=440:r=44100", "-t", "2", "-c:v", "libx264", "-bf", "2",
                                           "-preset", "veryfast", "-c:a", "aac"] + flags + [path])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        var reader = try MP4Reader(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let audio = try #require(reader.tracks.first { $0.handlerType == "soun" })
        let format = try #require(audio.format?.audio)
        #expect(format.codec == .aac && format.sampleRate == 44_100 && format.channelCount == 1)
        var frames: [MP4Frame] = [], lastTime: Duration?
        while let frame = try reader.next() {
            if let lastTime { #expect(frame.frame.decodeTime >= lastTime) }
            lastTime = frame.frame.decodeTime
            if frame.trackID == audio.trackID { frames.append(frame) }
        }
        #expect(reader.warnings.isEmpty, "\(reader.warnings)")
        let copied = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-c:a", "copy", "-f", "adts", "-"])
        try #require(copied.status == 0, "ffmpeg: \(copied.stderr)")
        let theirs = try ADTSFrames.frames(copied.stdout)
        #expect(frames.count == theirs.count)
        #expect(frames.map(\.data) == theirs)
        let packets = try Self.probedPackets(path, stream: "a:0")
        #expect(frames.map(\.presentationTimestamp) == packets.map(\.pts))
        #expect(frames.map(\.decodeTimestamp) == packets.map(\.dts))
    }

    /// Opus (`Opus` + `dOps`) as FFmpeg's libopus writes it: the format is Opus at 48 kHz with
    /// an `OpusHead` cookie; the packets are FFmpeg's (`-c:a copy -f data`), their sizes and
    /// times ffprobe's (the pre-skip edit shift included).
    @Test func opusMatchesFFmpeg() throws {
        let path = Self.temporaryPath("mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let made = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:r=48000", "-t", "1",
                                           "-c:a", "libopus", path])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        var reader = try MP4Reader(source: try MP4FileSource(path: path))
        let format = try #require(reader.tracks.first?.format?.audio)
        #expect(format.codec == .opus && format.sampleRate == 48_000 && format.channelCount == 1)
        #expect(format.magicCookie.starts(with: Array("OpusHead".utf8)) && format.magicCookie.count == 19)
        var frames: [MP4Frame] = []
        while let frame = try reader.next() { frames.append(frame) }
        #expect(reader.warnings.isEmpty, "\(reader.warnings)")
        let copied = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-c:a", "copy", "-f", "data", "-"])
        try #require(copied.status == 0, "ffmpeg: \(copied.stderr)")
        #expect(frames.flatMap(\.data) == copied.stdout)
        let packets = try Self.probedPackets(path, stream: "a:0")
        #expect(frames.map(\.presentationTimestamp) == packets.map(\.pts))
        #expect(frames.map(\.decodeTimestamp) == packets.map(\.dts))
    }
}
