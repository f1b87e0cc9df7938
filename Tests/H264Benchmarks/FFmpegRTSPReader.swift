import Foundation
import H264TestSupport

/// One `ffmpeg` process reading RTSP streams over TCP, every track of each, to the null muxer
/// (`-c copy -f null`): the viewer of the relay benchmarks, and a peer's cost of reading a camera.
/// Its progress (`-progress FILE`) says how many frames of its first input it has read.
final class FFmpegRTSPReader {
    let process: Process
    private let directory: URL
    private let progress: String

    /// Starts reading `urls` (each `-rtsp_transport tcp`, all mapped).
    init(urls: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-ffmpeg-reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        progress = directory.appendingPathComponent("progress.txt").path
        var arguments = ["-nostdin", "-nostats", "-loglevel", "error"]
        for url in urls { arguments += ["-rtsp_transport", "tcp", "-i", url] }
        for index in urls.indices { arguments += ["-map", "\(index)"] }
        arguments += ["-c", "copy", "-f", "null", "-progress", progress, "-"]
        process = try Subprocess.launch("ffmpeg", arguments)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Frames of the first input read so far (written every 0.5 s).
    var frames: Int { AllBenchmarks.RTSPIngestBenchmarks.frames(in: progress) }

    /// This process's CPU so far (nil once it is gone).
    var cpu: CPUTime.Split? { CPUTime.splitOfProcess(process.processIdentifier) }

    /// Waits until `frames` of the first input were read (its start-up, opening and probing the
    /// inputs one after another, stays outside a window); false if it ended or `timeout` passed.
    func warmUp(frames target: Int, timeout: Duration = .seconds(60)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while frames < target && process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100)) // polls a file: nothing signals its writes
        }
        return process.isRunning && frames >= target
    }

    /// Ends it (SIGKILL: a child inherits the blocked SIGTERM) and waits.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
