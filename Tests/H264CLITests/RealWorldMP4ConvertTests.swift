import Foundation
import H264
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// Real-world MP4 and QuickTime files read as FFmpeg reads them (issue 36): `h264 convert X -o
/// X.264` (or `.265`) gives exactly, unit by unit, the NAL units of `ffmpeg -i X -map 0:v:0 -c
/// copy -bsf:v h264_mp4toannexb` (`hevc_mp4toannexb`); ``MP4Reader``'s video frames carry
/// ffprobe's packet times and keyframe flags, and its first audio track is FFmpeg's `-c:a copy`
/// packets. The files are of two kinds: committed ones other tools
/// made, which cannot run here (phones, packagers, other FFmpeg versions:
/// `Fixtures/mp4-real-world/`, each file's source, licence and commit in `Fixtures/PROVENANCE`),
/// and ones the peers installed here make in the test (GStreamer's `mp4mux`/`qtmux`/
/// `splitmuxsink`, FFmpeg's `-movflags cmaf` and `-f mov`, Chromium's MediaRecorder). Every
/// program runs under `timeout`.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RealWorldMP4ConvertTests {
    static func run(_ program: String, _ arguments: [String]) throws -> Subprocess.Output {
        try Subprocess.run("timeout", ["90", program] + arguments)
    }

    /// The committed files, but the media segment without `moov`, which FFmpeg refuses
    /// (``aMediaSegmentWithoutMoovFailsAsInFFmpeg()``).
    static let fixtures: [String] = TestFixtures.listed
        .filter { $0.hasPrefix("mp4-real-world/") && !$0.contains("sideloaded") }
        .map { String($0.dropFirst("mp4-real-world/".count)) }

    static func units(_ bytes: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
    }

    /// `h264 convert` of `path` to Annex-B and FFmpeg's bitstream filter of its first video
    /// stream compared unit by unit; then the audio.
    /// `checkingTimes: false` leaves out ``expectFFprobesVideoTimes(_:)`` (see
    /// ``Peer/ffprobeTimesAreRead``).
    static func expectFFmpegsReading(_ path: String, in directory: URL, checkingTimes: Bool = true) throws {
        let probe = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path])
        let codec = String(decoding: probe.stdout, as: UTF8.self).split(whereSeparator: { $0 == "," || $0 == "\n" }).first.map(String.init)
        try #require(codec == "h264" || codec == "hevc", "ffprobe: video codec \(codec ?? "none"): \(probe.stderr)")
        let hevc = codec == "hevc"
        let output = directory.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent + (hevc ? ".265" : ".264")).path
        let convert = try run(CLI.executable.path, ["convert", path, "-o", output])
        try #require(convert.status == 0, "h264 convert: \(convert.stderr)")
        let ffmpeg = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-c:v", "copy",
                                        "-bsf:v", hevc ? "hevc_mp4toannexb" : "h264_mp4toannexb", "-f", hevc ? "hevc" : "h264", "-"])
        try #require(ffmpeg.status == 0, "ffmpeg: \(ffmpeg.stderr)")
        let ours = units(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))), theirs = units(ffmpeg.stdout)
        let first = zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(ours.count, theirs.count)
        let same = ours == theirs
        #expect(!ours.isEmpty && same,
                "\(ours.count) NAL units, FFmpeg's \(theirs.count); the first that differs: #\(first)\n\(convert.stderr)")
        if checkingTimes { try expectFFprobesVideoTimes(path) }
        try expectFFmpegsAudio(path)
    }

    /// The first video track's frames as ``MP4Reader`` reads them carry ffprobe's packet
    /// times (pts, dts, on the track's clock) and keyframe flags, in decoding order.
    static func expectFFprobesVideoTimes(_ path: String) throws {
        let probe = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,dts,flags", "-of", "csv=p=0", path])
        try #require(probe.status == 0, "ffprobe: \(probe.stderr)")
        let packets = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map { line in
            line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        var reader = try MP4Reader(source: try MP4FileSource(path: path))
        let video = try #require(reader.tracks.first { $0.format?.video != nil })
        var ours: [[String]] = []
        while let frame = try reader.next() {
            if frame.trackID == video.trackID { ours.append(["\(frame.presentationTimestamp)", "\(frame.decodeTimestamp)", frame.isKeyframe ? "K" : "_"]) }
        }
        let theirs = packets.map { Array($0.prefix(2)) + [$0.count > 2 && $0[2].hasPrefix("K") ? "K" : "_"] }
        let first = zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(ours.count == theirs.count && first == nil,
                "\(ours.count) frames, ffprobe's \(theirs.count); first difference: \(first.map { "#\($0.offset) ours \($0.element.0) ffprobe \($0.element.1)" } ?? "none")")
    }

    /// The first audio track's frames as ``MP4Reader`` reads them against FFmpeg's: as many as
    /// ffprobe's packets, of its sizes, and their bytes those of `-c:a copy -f data`. A file
    /// without an AAC or Opus stream (ffprobe's word; FFmpeg keeps a track without `stsd` as an
    /// audio stream of no codec) must give no audio track of ours either.
    static func expectFFmpegsAudio(_ path: String) throws {
        let codec = try run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path])
        let probe = try run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=size", "-of", "csv=p=0", path])
        try #require(probe.status == 0, "ffprobe: \(probe.stderr)")
        // A packet with side data (AAC priming's skip samples) prints more fields after its size.
        let read = ["aac", "opus"].contains(String(decoding: codec.stdout, as: UTF8.self).split(whereSeparator: { $0 == "," || $0 == "\n" }).first ?? "")
        let sizes = read ? String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int($0.split(separator: ",")[0]) } : []
        var reader = try MP4Reader(source: try MP4FileSource(path: path))
        let audio = reader.tracks.first { $0.format?.audio != nil }
        guard !sizes.isEmpty else {
            #expect(audio == nil, "ffprobe sees no audio, we read track \(audio?.trackID ?? 0)")
            return
        }
        let track = try #require(audio, "ffprobe sees \(sizes.count) audio packets, we read no audio track")
        var frames: [[UInt8]] = []
        while let frame = try reader.next() {
            if frame.trackID == track.trackID { frames.append(frame.data) }
        }
        let copied = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-c:a", "copy", "-f", "data", "-"])
        try #require(copied.status == 0, "ffmpeg: \(copied.stderr)")
        let sameSizes = frames.map(\.count) == sizes, sameBytes = frames.flatMap { $0 } == copied.stdout
        #expect(sameSizes, "\(frames.count) audio frames, ffprobe's \(sizes.count)")
        #expect(sameBytes, "our \(frames.reduce(0) { $0 + $1.count }) audio bytes, FFmpeg's \(copied.stdout.count)")
    }

    @Test(arguments: fixtures) func committedFileConvertsToFFmpegsAnnexB(_ name: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.expectFFmpegsReading(try TestFixtures.path("mp4-real-world/" + name), in: directory)
    }

    /// What a peer installed here makes, from x264/x265 streams with B-frames FFmpeg encodes
    /// into Matroska (which carries the timestamps `mp4mux` needs).
    enum Peer: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case gstreamerMP4Mux, gstreamerMP4MuxFaststart, gstreamerMP4MuxFragmented, gstreamerQTMux, gstreamerMP4MuxHEVC,
             gstreamerMP4MuxWithAAC, gstreamerSplitMuxSink, ffmpegCMAF, ffmpegCMAFHEVC, ffmpegMOVHEVC
        var testDescription: String { rawValue }
        /// False for GStreamer 1.22's fragmented `mp4mux` of a B-frame stream: its `trun`s carry
        /// no composition offsets and its `tfdt`s go back before the previous fragment's end;
        /// FFmpeg marks the frames that fall behind as discarded and moves their dts, we keep the
        /// `tfdt`'s times (its NAL units and audio still compare).
        var ffprobeTimesAreRead: Bool { self != .gstreamerMP4MuxFragmented }
    }

    static func matroska(_ directory: URL, hevc: Bool = false, aac: Bool = false) throws -> String {
        let path = directory.appendingPathComponent(hevc ? "x265.mkv" : aac ? "x264-aac.mkv" : "x264.mkv").path
        let audio = aac ? ["-f", "lavfi", "-i", "sine=f=440:r=48000"] : []
        let video = hevc ? ["-c:v", "libx265", "-x265-params", "bframes=3:log-level=error"] : ["-c:v", "libx264", "-bf", "3"]
        let made = try run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30"] + audio
                           + ["-t", "2", "-g", "30"] + video + (aac ? ["-c:a", "aac"] : []) + ["-y", path])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        return path
    }

    /// `gst-launch-1.0 -q` of `pipeline` (its elements and properties as separate arguments).
    static func gstreamer(_ pipeline: String) throws {
        let launched = try run("gst-launch-1.0", ["-q"] + pipeline.split(separator: " ").map(String.init))
        try #require(launched.status == 0, "gst-launch-1.0 \(pipeline): \(launched.stderr)")
    }

    /// The files `peer` makes in `directory`.
    static func make(_ peer: Peer, in directory: URL) throws -> [String] {
        let out = { (name: String) in directory.appendingPathComponent(name).path }
        let h264 = "matroskademux ! h264parse"
        switch peer {
        case .gstreamerMP4Mux:
            try gstreamer("filesrc location=\(try matroska(directory)) ! \(h264) ! mp4mux ! filesink location=\(out("mp4mux.mp4"))")
            return [out("mp4mux.mp4")]
        case .gstreamerMP4MuxFaststart:
            try gstreamer("filesrc location=\(try matroska(directory)) ! \(h264) ! mp4mux faststart=true ! filesink location=\(out("fast.mp4"))")
            return [out("fast.mp4")]
        case .gstreamerMP4MuxFragmented:
            try gstreamer("filesrc location=\(try matroska(directory)) ! \(h264) ! mp4mux fragment-duration=500 ! filesink location=\(out("frag.mp4"))")
            return [out("frag.mp4")]
        case .gstreamerQTMux:
            try gstreamer("filesrc location=\(try matroska(directory)) ! \(h264) ! qtmux ! filesink location=\(out("qtmux.mov"))")
            return [out("qtmux.mov")]
        case .gstreamerMP4MuxHEVC:
            try gstreamer("filesrc location=\(try matroska(directory, hevc: true)) ! matroskademux ! h265parse ! mp4mux ! filesink location=\(out("hevc.mp4"))")
            return [out("hevc.mp4")]
        case .gstreamerMP4MuxWithAAC:
            try gstreamer("filesrc location=\(try matroska(directory, aac: true)) ! matroskademux name=d d.video_0 ! queue ! h264parse ! mp4mux name=m"
                          + " ! filesink location=\(out("aac.mp4")) d.audio_0 ! queue ! aacparse ! m.")
            return [out("aac.mp4")]
        case .gstreamerSplitMuxSink:
            // async-handling=true: without it gst-launch-1.0 hung at the end of the stream in
            // about one run in ten here (GStreamer 1.22).
            try gstreamer("filesrc location=\(try matroska(directory)) ! \(h264) ! splitmuxsink async-handling=true"
                          + " location=\(out("split%02d.mp4")) max-size-time=1000000000")
            return [out("split00.mp4"), out("split01.mp4")]
        case .ffmpegCMAF, .ffmpegCMAFHEVC, .ffmpegMOVHEVC:
            let source = try matroska(directory, hevc: peer != .ffmpegCMAF)
            let path = out(peer == .ffmpegMOVHEVC ? "ffmpeg.mov" : "cmaf.mp4")
            let flags = peer == .ffmpegMOVHEVC ? ["-f", "mov"] : ["-movflags", "cmaf"]
            let made = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", source, "-c", "copy", "-tag:v", peer == .ffmpegCMAF ? "avc1" : "hvc1"]
                               + flags + ["-y", path])
            try #require(made.status == 0, "ffmpeg: \(made.stderr)")
            return [path]
        }
    }

    @Test(arguments: Peer.allCases) func peerMadeFileConvertsToFFmpegsAnnexB(_ peer: Peer) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for path in try Self.make(peer, in: directory) { try Self.expectFFmpegsReading(path, in: directory, checkingTimes: peer.ffprobeTimesAreRead) }
    }

    /// Chromium's MediaRecorder (`video/mp4;codecs=avc1,opus`, a 500 ms timeslice): a
    /// fragmented MP4 of OpenH264's Constrained Baseline and Opus, as a web page recording a
    /// camera writes it (Scripts/chromium-record.py drives headless Chromium).
    @Test func chromiumMediaRecorderFileConvertsToFFmpegsAnnexB() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("mediarecorder.mp4").path
        let script = TestFixtures.packageRoot.appendingPathComponent("Scripts/chromium-record.py").path
        let recorded = try Self.run("/usr/bin/python3", [script, path, "--seconds", "2", "--audio"])
        try #require(recorded.status == 0, "chromium-record.py: status \(recorded.status): \(recorded.stderr)")
        let reader = try MP4Reader(source: try MP4FileSource(path: path))
        #expect(reader.isFragmented && reader.tracks.compactMap(\.format?.audio?.codec) == [.opus])
        try Self.expectFFmpegsReading(path, in: directory)
    }

    /// androidx/media's `sample_missing_stsd.mp4` (PROVENANCE): a track whose `stbl` has no
    /// `stsd`. FFmpeg keeps it as a stream of no codec and reads the rest; we keep it without
    /// sample entries, say so, and read the H.264 track (its units FFmpeg's, in the table above).
    @Test func aTrackWithoutStsdIsSkippedAsFFmpegSkipsIt() throws {
        var reader = try MP4Reader(source: try MP4FileSource(path: try TestFixtures.path("mp4-real-world/androidx_sample_missing_stsd.mp4")))
        #expect(reader.tracks.count == 2 && reader.tracks.filter(\.sampleEntries.isEmpty).count == 1)
        var videoFrames = 0
        while let frame = try reader.next() { if frame.frame.videoFormat != nil { videoFrames += 1 } }
        #expect(videoFrames == 30, "\(videoFrames)")
        #expect(reader.warnings.contains { $0.code == .mp4MissingBox && $0.field == "stsd" }, "\(reader.warnings)")
    }

    /// androidx/media's `sample_fragmented_sideloaded_track.mp4` (PROVENANCE): `moof` + `mdat`
    /// without `moov` (the track is described outside the file). FFmpeg probes it as MP4 and
    /// refuses it; `convert` reads it as MP4 too (not as Annex-B) and fails for want of `moov`.
    @Test func aMediaSegmentWithoutMoovFailsAsInFFmpeg() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try TestFixtures.path("mp4-real-world/androidx_sample_fragmented_sideloaded_track.mp4")
        let ffmpeg = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-c", "copy", "-f", "h264", "-"])
        #expect(ffmpeg.status != 0 && ffmpeg.stderr.contains("mov,mp4"), "\(ffmpeg.stderr)")
        let convert = try Self.run(CLI.executable.path, ["convert", path, "-o", directory.appendingPathComponent("out.264").path])
        #expect(convert.status != 0 && convert.stderr.contains("mp4MissingBox") && convert.stderr.contains("moov"), "\(convert.stderr)")
    }
}
