import Foundation
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension AllBenchmarks {
/// `mp4_recorder_rss_growth_mb` and `mp4_recorder_rotating_rss_growth_mb`: an hour of 1080p
/// recorded as `h264 receive … -o rec.mp4` records it, fed as fast as this process can, and
/// this process's resident memory (`/proc/self/statm`) read after every minute of media. The
/// media: the first GOP of ``MP4BenchmarkInput`` (2 s, 60 frames of 1080p x264 veryfast at
/// 6 Mbit/s with B-frames) over and over with its times rewritten (decoding time frame ÷ 30 s,
/// each frame's composition offset kept), and its AAC frames in turn every 1024 ÷ 48 000 s;
/// both tracks in decoding-time order, as the fan-out hands them to the recorder.
///
/// The recorder's writing as `ReceivedMP4Output` does it (that type is the CLI's): a
/// `FragmentedMP4FileWriter` of both formats, a fragment per GOP and at most half a second
/// (`maximumFragmentDuration`), one file in a temporary directory. The rotating run starts a new
/// file at the first keyframe past ``segmentMinutes`` and finalises the one before into a
/// progressive MP4 (`MP4Finalizing.progressive(fromFragmented:)`), as `--segment-duration`
/// does; each finished segment is then deleted (the benchmark's disk, not the recorder's
/// work). The figure: resident MB after ``minutes`` minutes minus after ``fromMinute``.
@Suite("MP4Recorder")
struct MP4RecorderMemoryBenchmarks {
    static let minutes = Bench.isDebugBuild ? 3 : 60
    static let fromMinute = Bench.isDebugBuild ? 1 : 10
    static let segmentMinutes = Bench.isDebugBuild ? 1 : 10

    /// The frames repeated: one GOP of video (decode order) with each frame's composition
    /// offset in frames, and AAC frames.
    struct Material {
        var video: [(frame: CompressedFrame, offsetFrames: Int)]
        var audio: [CompressedFrame]
    }

    static func material() throws -> Material {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try MP4BenchmarkInput.flv())))
        let frames = try FLVReader.read(bytes).frames
        let video = frames.filter { $0.frame.videoFormat != nil }
        let first = try #require(video.firstIndex { $0.frame.isKeyframe })
        let next = try #require(video[(first + 1)...].firstIndex { $0.frame.isKeyframe })
        let gop = video[first..<next].map { tag in
            (tag.frame, Int((Double(tag.compositionTime) * Double(MP4BenchmarkInput.framesPerSecond) / 1000).rounded()))
        }
        try #require(gop.count == 60, "a GOP of \(gop.count) frames")
        let audio = frames.map(\.frame).filter { $0.audioFormat != nil }
        try #require(audio.count > 100)
        return Material(video: gop, audio: Array(audio.prefix(200)))
    }

    /// Resident bytes of this process (`/proc/self/statm`, field 2, in pages).
    static func residentBytes() -> Int {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .ascii)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// What one recording did: resident bytes after each minute of media (index 0: before the
    /// first frame), wall seconds, bytes written, files.
    struct Recording {
        var resident: [Int] = []
        var seconds: Double = 0
        var bytes: Int = 0
        var files = 0
        var videoFrames = 0
        var audioFrames = 0
    }

    /// Records ``minutes`` of `material` into `directory`, rotating every `segment` if given.
    static func record(_ material: Material, in directory: URL, segment: Duration?) throws -> Recording {
        var recording = Recording()
        let formats = [material.video[0].frame.format, material.audio[0].format]
        var writer: FragmentedMP4FileWriter?
        var path = ""
        var segmentStart = Duration.zero
        func open(at time: Duration) throws {
            path = directory.appendingPathComponent("rec-\(recording.files + 1).mp4").path
            let file = try FragmentedMP4FileWriter(path: path, formats: formats)
            file.maximumFragmentDuration = .milliseconds(500)
            writer = file
            segmentStart = time
            recording.files += 1
        }
        func close() throws {
            guard let file = writer else { return }
            try file.finish()
            writer = nil
            if segment != nil { try MP4Finalizing.progressive(fromFragmented: path) }
            recording.bytes += (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            try FileManager.default.removeItem(atPath: path)
        }
        let fps = Int64(MP4BenchmarkInput.framesPerSecond)
        let totalVideo = Int64(minutes * 60) * fps
        var videoIndex: Int64 = 0, audioIndex: Int64 = 0
        recording.resident.append(residentBytes())
        let start = Bench.now()
        try open(at: .zero)
        while videoIndex < totalVideo {
            let videoTime = Duration.nanoseconds(videoIndex * 1_000_000_000 / fps)
            let audioTime = Duration.nanoseconds(audioIndex * 1024 * 1_000_000_000 / 48_000)
            var frame: CompressedFrame
            if audioTime < videoTime {
                frame = material.audio[Int(audioIndex % Int64(material.audio.count))]
                frame.presentationTime = audioTime
                frame.decodeTime = audioTime
                audioIndex += 1
                recording.audioFrames += 1
            } else {
                let (source, offset) = material.video[Int(videoIndex % Int64(material.video.count))]
                frame = source
                frame.decodeTime = videoTime
                frame.presentationTime = .nanoseconds((videoIndex + Int64(offset)) * 1_000_000_000 / fps)
                videoIndex += 1
                recording.videoFrames += 1
                if let segment, frame.isKeyframe, videoTime - segmentStart >= segment {
                    try close()
                    try open(at: videoTime)
                }
                if videoIndex % (60 * fps) == 0 {
                    recording.resident.append(residentBytes())
                }
            }
            try writer?.append(frame)
        }
        try close()
        recording.seconds = Double(Bench.now() - start) / 1e9
        return recording
    }

    static func run(key: String, segment: Duration?) throws {
        let material = try material()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-mp4-recorder-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = try record(material, in: directory, segment: segment)
        #expect(recording.videoFrames == minutes * 60 * MP4BenchmarkInput.framesPerSecond)
        #expect(recording.resident.count == minutes + 1)
        #expect(recording.files == (segment == nil ? 1 : minutes / segmentMinutes))
        let megabytes = recording.resident.map { Double($0) / 1_048_576 }
        let growth = megabytes[minutes] - megabytes[fromMinute]
        let marks = [0, 1, fromMinute, minutes / 2, minutes].map { String(format: "%d min %.1f", $0, megabytes[$0]) }
        BenchmarkReport.shared.record(
            key, growth, goal: "≈ 0",
            detail: String(format: "resident MB at %d min − at %d min of media; ", minutes, fromMinute) + marks.joined(separator: ", ")
                + String(format: " MB (most %.1f); %d video + %d AAC frames, %.2f GB in %d file(s)",
                         megabytes.max() ?? .nan, recording.videoFrames, recording.audioFrames, Double(recording.bytes) / 1e9, recording.files)
                + (segment == nil ? "" : ", each finalised to a progressive MP4")
                + String(format: ", recorded in %.1f s (%.0f× real time)", recording.seconds, Double(minutes * 60) / recording.seconds))
    }

    @Test(.timeLimit(.minutes(5))) func recorderMemoryOverAnHour() throws {
        try Self.run(key: "mp4_recorder_rss_growth_mb", segment: nil)
    }

    @Test(.timeLimit(.minutes(5))) func rotatingRecorderMemoryOverAnHour() throws {
        try Self.run(key: "mp4_recorder_rotating_rss_growth_mb", segment: .seconds(Self.segmentMinutes * 60))
    }
}
}
