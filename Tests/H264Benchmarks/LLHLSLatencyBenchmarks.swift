import Foundation
import H264Streaming
import H264TestSupport
import MediaContainers
import MediaCore
import NIOPosix
import Testing

extension AllBenchmarks {
/// `llhls_glass_to_glass_ms`: how long after a frame enters the packager a browser shows it,
/// with 200 ms parts and 2 s segments. The source is FFmpeg's `testsrc2` (640×360, 30 fps, x264
/// `zerolatency`, an IDR every 0.5 s) with its frame number drawn into its top 16 rows
/// (Scripts/chromium-hls.py's code); its access units are appended to an `HLSLiveStream` at
/// their real-time pace and the time of each append is kept. `HLSServer` serves it on
/// 127.0.0.1, and headless Chromium plays it with our MSE harness (blocking reloads, parts
/// appended one by one), reading the number of every frame it shows and when. The figure is
/// the median over the frames read of (shown − appended), both on this machine's wall clock.
@Suite("LLHLSLatency")
struct LLHLSLatencyBenchmarks {
    static let seconds = 40
    static let framesPerSecond = 30

    /// The numbered clip's access units.
    static func frames() throws -> [CompressedFrame] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("llhls-numbered-\(getpid()).264").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let code = "geq=lum='if(lt(Y,16),if(bitand(floor(N/pow(2,15-floor(X*16/W))),1),235,16),lum(X,Y))'"
            + ":cb='if(lt(Y,16*SH),128,cb(X,Y))':cr='if(lt(Y,16*SH),128,cr(X,Y))'"
        let encode = try Subprocess.run("timeout", ["120", "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                                                    "testsrc2=size=640x360:rate=\(framesPerSecond)", "-t", "\(seconds)", "-vf", code,
                                                    "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "15", "-bf", "0",
                                                    "-f", "h264", "-y", path])
        try #require(encode.status == 0, "\(encode.stderr)")
        return try MP4Conversion.frames(fromAnnexB: [UInt8](Data(contentsOf: URL(fileURLWithPath: path))), frameRate: nil)
    }

    /// What the harness reported.
    struct Report: Decodable {
        var shownAt: [String: Double]
        var framesRead: Int
        var unreadableFrames: Int
        var stalls: Int
        var error: String?
        var behindProgramDateTimeSeconds: Double?
    }

    @Test(.timeLimit(.minutes(5))) func glassToGlass() async throws {
        let frames = try Self.frames()
        try #require(frames.count == Self.seconds * Self.framesPerSecond)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await HLSServer.start(host: "127.0.0.1", port: 0, group: group)
        let stream = HLSLiveStream(HLSPackager.Configuration(segmentDuration: .seconds(2), partDuration: .milliseconds(200)))
        server.mount(path: "/live", stream: stream)
        let url = server.url(host: "127.0.0.1", path: "/live")
        let entered = Locked([Int: Double]())
        // The source: each access unit at its time (the pace of a camera), the wall clock of its append kept.
        let feeder = Thread {
            let start = Date()
            for (index, frame) in frames.enumerated() {
                let due = start.addingTimeInterval(Double(index) / Double(Self.framesPerSecond))
                let wait = due.timeIntervalSinceNow
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                let now = Date().timeIntervalSince1970
                entered.withLock { $0[index] = now * 1000 }
                _ = try? stream.append(frame, wallClock: .nanoseconds(Int64(now * 1e9)))
                if Thread.current.isCancelled { return }
            }
        }
        feeder.start()
        defer { feeder.cancel() }
        let script = TestFixtures.packageRoot.appendingPathComponent("Scripts/chromium-hls.py").path
        let run: Subprocess.Output = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    try Subprocess.run("timeout", ["120", "/usr/bin/python3", script, url, "--mse", "--frame-numbers", "--seconds", "20", "--timeout", "40"])
                })
            }
        }
        feeder.cancel()
        await server.shutdown()
        try await group.shutdownGracefully()
        try #require(run.status == 0, "\(run.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(run.stdout))
        #expect(report.error == nil && report.unreadableFrames == 0, "\(report.error ?? "") \(report.unreadableFrames) unreadable")
        let times = entered.withLock { $0 }
        let latencies = report.shownAt.compactMap { key, shown in Int(key).flatMap { times[$0] }.map { shown - $0 } }.sorted()
        try #require(latencies.count >= 100, "\(latencies.count) frames read back")
        let median = Bench.median(latencies)
        BenchmarkReport.shared.record(
            "llhls_glass_to_glass_ms", median, goal: "≤ 1500",
            detail: "ms from a frame's append to the packager to Chromium showing it (its number read from its pixels), median of "
                + "\(latencies.count) frames (10th–90th percentile \(Int(latencies[latencies.count / 10]))–\(Int(latencies[latencies.count * 9 / 10])) ms); "
                + "640x360 30 fps, IDR every 0.5 s, 200 ms parts, 2 s segments; our MSE harness (blocking reloads, part by part), "
                + "\(report.stalls) stalls; behind EXT-X-PROGRAM-DATE-TIME \(report.behindProgramDateTimeSeconds.map { String(format: "%.2f s", $0) } ?? "-")")
    }
}
}
