import Foundation
import H264
import H264TestSupport
import Testing

/// The camera of the RTSP join benchmark (`relay_rtsp_join_first_frame_*`): ``CameraStream``'s
/// recipe (FFmpeg's `testsrc2`, 1280×720 at 30 fps, libx264 veryfast, about 2 Mbit/s, no
/// B-frames) with long GOPs — an IDR every ``keyframeInterval`` frames (3 s) and no other —
/// so that joins land all over the GOP. A 9-second clip (three GOPs) is encoded once per test
/// process and repeated to ``seconds`` as Annex-B (for `h264 relay`) and the same H.264 track
/// in Matroska (for gst-rtsp-server, which plays it once through: it must outlast the joins).
enum LongGOPCamera {
    static let keyframeInterval = 90
    static let clipSeconds = 9
    /// Longer than all the joins of both servers take (at most two GOPs each).
    static let seconds = Bench.isDebugBuild ? 45 : 126

    /// The files, made at the first call; removed when the process exits.
    static func files() throws -> CameraStream.Files { try made.get() }

    private static let made = Result<CameraStream.Files, any Error>(catching: { try make() })

    private static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-long-gop-camera-\(getpid())")

    private static func make() throws -> CameraStream.Files {
        atexit { try? FileManager.default.removeItem(at: LongGOPCamera.directory) }
        return try CameraStream.make(in: directory, clipSeconds: clipSeconds, seconds: seconds,
                              gop: ["-g", "\(keyframeInterval)", "-keyint_min", "\(keyframeInterval)", "-sc_threshold", "0"])
    }
}
