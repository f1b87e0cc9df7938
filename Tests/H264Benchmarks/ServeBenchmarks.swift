import Foundation
import H264
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension AllBenchmarks {
/// `h264 serve` under 50 viewers: how close to the source rate pictures reach them, and how
/// many frame intervals a joining viewer waits for its first IDR. Real-time figures of a
/// subprocess on loopback, so they are measured alike in debug and release builds.
@Suite("Serve")
struct ServeBenchmarks {
    /// Committed fixture Fixtures/cars_320x240_30f.y4m (see Fixtures/PROVENANCE): 30 fps.
    static let y4m = TestFixtures.url("cars_320x240_30f.y4m").path
    static let sourceFPS = 30.0
    /// Runs of the whole scenario (a fresh server each); the figures are medians over them.
    static let runs = Bench.isDebugBuild ? 1 : 3
    /// Pictures each of the first 50 viewers is timed over (3 s of the source).
    static let timedPictures = 90
    /// Viewers joining one at a time while the 50 stream, a third of a second apart.
    static let lateJoiners = 10

    /// The server's nice value: −10, as a live server is deployed with the priority it needs and
    /// as its viewers read here (where raising is not allowed, `nice` runs it at 0), or
    /// `H264_SERVE_NICE`.
    static let serverNice: Int32 = ProcessInfo.processInfo.environment["H264_SERVE_NICE"].flatMap { Int32($0) } ?? -10

    /// One run: the server (x264 ultrafast, one thread, as the serve tests; at ``serverNice``),
    /// 50 viewers at once, then 10 more one at a time. Returns every viewer's rate over its first 90 pictures
    /// (the 50) and every viewer's wait for its first IDR in frame intervals (all 60).
    static func run() throws -> (fps: [Double], idrFrames: [Double], untimestampedReads: Int) {
        let server = try ServeProcess(executable: ServeProcess.h264Executable, input: y4m,
                                      ["--loop", "--quiet", "--preset", "ultrafast", "--threads", "1"],
                                      nice: serverNice)
        defer { server.kill() }
        // The viewers stand for other machines: they read at nice −10 where that is allowed,
        // so that their own lag does not show as the server's.
        let clients = try (0..<50).map { _ in try TCPClient(port: server.port) }
        try TCPClient.pump(clients, deadline: .now + .seconds(30), readerNice: -10) {
            clients.allSatisfy { $0.accessUnits.count > timedPictures }
        }
        var late: [TCPClient] = []
        for _ in 0..<lateJoiners {
            let marker = clients[0].accessUnits.count
            try TCPClient.pump(clients + late, deadline: .now + .seconds(30), readerNice: -10) {
                clients[0].accessUnits.count >= marker + 10
            }
            late.append(try TCPClient(port: server.port))
        }
        try TCPClient.pump(clients + late, deadline: .now + .seconds(30), readerNice: -10) {
            late.allSatisfy { $0.firstIDROffset != nil && $0.accessUnits.count > 1 }
        }
        #expect(server.stop() == 0)

        var fps: [Double] = []
        for client in clients {
            guard let first = client.arrival(of: client.accessUnits[0].streamOffset),
                  let last = client.arrival(of: client.accessUnits[timedPictures].streamOffset), last > first else { continue }
            fps.append(Double(timedPictures) / (last - first))
        }
        var idrFrames: [Double] = []
        for client in clients + late {
            #expect(client.firstNALUnitTypes == [7, 8, 5])
            guard let offset = client.firstIDROffset, let at = client.arrival(of: offset) else { continue }
            idrFrames.append((at - client.connectedAt) * sourceFPS)
        }
        #expect(fps.count == clients.count && idrFrames.count == clients.count + late.count)
        // Reads the kernel gave no receive time are dated by this process's clock when it read
        // them (a few per run in a release build); the detail line counts them.
        let untimestamped = (clients + late).reduce(0) { $0 + $1.arrivals.count - $1.timestampedReads }
        return (fps, idrFrames, untimestamped)
    }

    /// `serve_viewer_fps_ratio` = median viewer fps ÷ source fps (goal 1: every viewer at the
    /// source rate); `serve_first_idr_after_join_frames` = median frame intervals from a
    /// viewer's connect to its first IDR's arrival (goal ≤ 1: the join pulls the next frame
    /// forward as an IDR).
    @Test func viewersUnderFiftyClients() throws {
        var fpsMedians: [Double] = [], idrMedians: [Double] = [], idrWorst: [Double] = [], fpsWorst: [Double] = []
        var untimestamped = 0
        for _ in 0..<Self.runs {
            let run = try Self.run()
            untimestamped += run.untimestampedReads
            fpsMedians.append(Bench.median(run.fps))
            fpsWorst.append(run.fps.min() ?? .nan)
            idrMedians.append(Bench.median(run.idrFrames))
            idrWorst.append(run.idrFrames.max() ?? .nan)
        }
        let fps = Bench.median(fpsMedians)
        BenchmarkReport.shared.record(
            "serve_viewer_fps_ratio", fps / Self.sourceFPS, goal: "≈ 1",
            detail: String(format: "median of 50 viewers %.2f fps (slowest %.2f) over %d pictures, source %.0f fps; server at nice %d; %d runs; %d reads without a kernel timestamp",
                           fps, Bench.median(fpsWorst), Self.timedPictures, Self.sourceFPS, Self.serverNice, Self.runs, untimestamped))
        BenchmarkReport.shared.record(
            "serve_first_idr_after_join_frames", Bench.median(idrMedians), goal: "≤ 1",
            detail: String(format: "frame intervals from connect to the first IDR, median of 50 joining at once + %d one by one (worst %.2f); %d runs",
                           Self.lateJoiners, Bench.median(idrWorst), Self.runs))
    }
}
}
