import Foundation
import H264Streaming
import H264TestSupport
import MediaContainers
import MediaCore
import NIOPosix
import Testing

extension AllBenchmarks {
/// `hls_serve_cpu_per_100_viewers`: the CPU a server spends on 100 viewers of an HLS stream,
/// ours against nginx serving the same files from disk (sendfile, the page cache warm). The
/// stream: ``MP4BenchmarkInput``'s 60 s of 1080p H.264 + AAC as HLS fMP4 (2 s segments), written
/// to disk by `h264 convert -o DIR/live/index.m3u8` for nginx, and the same frames appended to
/// an `HLSLiveStream` served by `HLSServer` in this process (checked first: the init segment and
/// the segments served are byte for byte the files). The viewers: curl, 100 transfers at once,
/// each viewer taking the playlist, the init segment and the first 5 segments (10 s of video)
/// over keep-alive connections. The figure: our process's CPU (every thread) ÷ nginx's (one
/// process, `master_process off`), median of paired runs (ABBA).
@Suite("HLSServe")
struct HLSServeBenchmarks {
    static let viewers = 100
    /// The segments each viewer takes (fewer when the input has fewer: a debug build's 4 s).
    static let segmentLimit = 5

    /// A curl config: every viewer's requests of `base` (`http://127.0.0.1:PORT/live/`), to /dev/null.
    static func curlConfig(_ base: String, segments: Int, path: String) throws {
        var lines: [String] = []
        for _ in 0..<viewers {
            for name in ["index.m3u8", "init-0.mp4"] + (0..<segments).map({ "seg-\($0).m4s" }) {
                lines += ["url = \"\(base)\(name)\"", "output = \"/dev/null\""]
            }
        }
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Runs the viewers of `config`; the bytes they took.
    static func watch(_ config: String) throws -> Int {
        let run = try Subprocess.run("timeout", ["120", "curl", "-sS", "--fail", "-Z", "--parallel-max", "\(viewers)", "-K", config,
                                                 "-w", "%{size_download}\n"])
        try #require(run.status == 0, "curl: \(run.stderr)")
        return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }.reduce(0, +)
    }

    @Test(.timeLimit(.minutes(10))) func serveVersusNginx() async throws {
        let input = try MP4BenchmarkInput.flv()
        let root = MP4BenchmarkInput.path("hls-serve")
        try HLSPackageBenchmarks.empty(root + "/live")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let convert = try Subprocess.run(ServeProcess.h264Executable.path, ["convert", input, "-o", root + "/live/index.m3u8"])
        try #require(convert.status == 0, "\(convert.stderr)")
        let listed = try String(contentsOfFile: root + "/live/index.m3u8", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("seg-") }.count
        let segments = min(Self.segmentLimit, listed)

        // Ours: the same frames into a stream, finished (every segment kept), served from memory.
        let stream = HLSLiveStream(HLSPackager.Configuration(partDuration: nil, windowSegments: 1000, minimumSegments: 1))
        for frame in try FLVReader.read([UInt8](Data(contentsOf: URL(fileURLWithPath: input)))).frames {
            _ = try stream.append(frame.frame, wallClock: .zero)
        }
        try stream.finish()
        for name in ["init-0.mp4"] + (0..<segments).map({ "seg-\($0).m4s" }) {
            guard case .resource(let resource) = await stream.resource(named: name) else { Issue.record("\(name) not served"); return }
            #expect(resource.bytes == [UInt8](try Data(contentsOf: URL(fileURLWithPath: root + "/live/" + name))), "\(name) differs from the file")
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await HLSServer.start(host: "127.0.0.1", port: 0, group: group)
        server.mount(path: "/live", stream: stream)

        // nginx: the files from disk, one process.
        let (nginx, nginxPort) = try PeerPort.start(.tcpListening, { port in
            try """
            daemon off;
            master_process off;
            error_log stderr error;
            pid \(root)/nginx.pid;
            events { worker_connections 1024; }
            http {
                access_log off; sendfile on; tcp_nopush on; keepalive_requests 10000;
                types { application/vnd.apple.mpegurl m3u8; video/mp4 mp4 m4s; }
                server { listen 127.0.0.1:\(port); root \(root); add_header Access-Control-Allow-Origin *; }
            }
            """.write(toFile: root + "/nginx.conf", atomically: true, encoding: .utf8)
            return try LoggingProcess(executable: URL(fileURLWithPath: "/usr/sbin/nginx"), ["-p", root, "-c", root + "/nginx.conf"])
        }, process: \.process)
        defer { nginx.kill() }
        let ours = root + "/ours.curl", theirs = root + "/nginx.curl"
        try Self.curlConfig("http://127.0.0.1:\(server.port)/live/", segments: segments, path: ours)
        try Self.curlConfig("http://127.0.0.1:\(nginxPort)/live/", segments: segments, path: theirs)
        let ourBytes = try Self.watch(ours), theirBytes = try Self.watch(theirs)
        // The same media bytes (checked above); only the playlists' texts differ, by less than 2 kB.
        #expect(theirBytes > Self.viewers * 100_000 && abs(ourBytes - theirBytes) < Self.viewers * 2000, "ours \(ourBytes) bytes, nginx's \(theirBytes)")

        let pid = nginx.process.processIdentifier
        var ourCPU: [Double] = [], theirCPU: [Double] = [], ourSplits: [CPUTime.Split] = [], theirSplits: [CPUTime.Split] = []
        func measureOurs() throws {
            let before = Bench.processCPU(), split = CPUTime.splitOfThisProcess()
            _ = try Self.watch(ours)
            ourCPU.append(Bench.processCPU() - before)
            ourSplits.append(CPUTime.splitOfThisProcess() - split)
        }
        func measureTheirs() throws {
            let before = CPUTime.splitOfProcess(pid)
            _ = try Self.watch(theirs)
            let after = CPUTime.splitOfProcess(pid)
            if let before, let after {
                theirCPU.append((after - before).total)
                theirSplits.append(after - before)
            }
        }
        for run in 0..<Bench.runs {
            if run % 2 == 0 { try measureOurs(); try measureTheirs() } else { try measureTheirs(); try measureOurs() }
        }
        await server.shutdown()
        try await group.shutdownGracefully()
        let ratio = Bench.pairedRatio(ourCPU, theirCPU)
        BenchmarkReport.shared.record(
            "hls_serve_cpu_per_100_viewers", ratio, goal: "≤ 1.5",
            detail: "server CPU ours ÷ nginx's (sendfile from the page cache), median of \(Bench.runs) paired runs (ABBA): \(Self.viewers) curl viewers at once "
                + "each taking the playlist, the init segment and \(segments) segments of 2 s of 1080p H.264 + AAC (\(ourBytes / Self.viewers / 1000) kB a viewer); "
                + "ours \(String(format: "%.0f", Bench.median(ourCPU) * 1000)) ms (HLSServer, one event loop, from memory; "
                + String(format: "user %.0f + system %.0f ms", Bench.median(ourSplits.map(\.user)) * 1000, Bench.median(ourSplits.map(\.system)) * 1000)
                + "), nginx \(String(format: "%.0f", Bench.median(theirCPU) * 1000)) ms ("
                + String(format: "user %.0f + system %.0f ms", Bench.median(theirSplits.map(\.user)) * 1000, Bench.median(theirSplits.map(\.system)) * 1000) + ")")
    }
}
}
