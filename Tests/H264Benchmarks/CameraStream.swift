import Foundation
import H264
import H264TestSupport
import Testing

/// The camera of the RTSP CPU benchmarks (`rtsp_ingest_cpu_vs_ffmpeg`,
/// `rtsp_fanout_cpu_vs_gstreamer`): 1280×720 at 30 fps, about 2 Mbit/s, High profile, an IDR
/// every 2 s, no B-frames — FFmpeg's `testsrc2` encoded by libx264 once per test process (a
/// 10-second clip, 2 s in a debug build) and repeated to ``seconds``, as an Annex-B file for
/// `h264 relay` and the same H.264 track in Matroska for gst-rtsp-server (whose `h264parse`
/// gives a raw Annex-B file no presentation times, so that `rtph264pay` would stamp every packet
/// alike). Both servers send the same access units at the same rate.
enum CameraStream {
    static let framesPerSecond = 30.0
    /// The encoded clip's length.
    static let clipSeconds = Bench.isDebugBuild ? 2 : 10
    /// The files' length: more than any one server is watched for (they are not looped).
    static let seconds = Bench.isDebugBuild ? 12 : 60

    /// The two files and the stream's bit rate.
    struct Files: Sendable {
        /// Annex-B.
        var annexB: String
        /// The same access units in Matroska.
        var matroska: String
        /// Bits per second of the Annex-B file.
        var bitRate: Double
    }

    /// The files, made at the first call (nothing is cached across test processes); removed
    /// when the process exits.
    static func files() throws -> Files { try made.get() }

    private static let made = Result<Files, any Error>(catching: { try make() })

    private static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-camera-stream-\(getpid())")

    private static func make() throws -> Files {
        atexit { try? FileManager.default.removeItem(at: CameraStream.directory) }
        return try make(in: directory, clipSeconds: clipSeconds, seconds: seconds, gop: ["-g", "60"])
    }

    /// Encodes `testsrc2` (1280×720, 30 fps, libx264 veryfast at 2 Mbit/s, no B-frames, the
    /// `gop` arguments) for `clipSeconds`, repeats it to `seconds` as Annex-B in `directory`,
    /// and muxes the same access units into Matroska.
    static func make(in directory: URL, clipSeconds: Int, seconds: Int, gop: [String]) throws -> Files {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let clip = directory.appendingPathComponent("clip.264").path
        let annexB = directory.appendingPathComponent("camera.264").path
        let matroska = directory.appendingPathComponent("camera.mkv").path
        let encoded = try Subprocess.run("ffmpeg", [
            "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", "\(clipSeconds)",
            "-c:v", "libx264", "-preset", "veryfast", "-b:v", "2M", "-maxrate", "2M", "-bufsize", "2M",
        ] + gop + ["-bf", "0", "-f", "h264", "-y", clip])
        try #require(encoded.status == 0, "ffmpeg: \(encoded.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: clip))
        let repeats = (seconds + clipSeconds - 1) / clipSeconds
        try Data((0..<repeats).map { _ in bytes }.joined()).write(to: URL(fileURLWithPath: annexB))
        let muxed = try Subprocess.run("ffmpeg", ["-nostdin", "-loglevel", "error", "-framerate", "30", "-i", annexB,
                                                  "-c", "copy", "-y", matroska])
        try #require(muxed.status == 0, "ffmpeg: \(muxed.stderr)")
        return Files(annexB: annexB, matroska: matroska, bitRate: Double(bytes.count * 8) / Double(clipSeconds))
    }
}
