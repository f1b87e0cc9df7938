import Foundation
import H264
import H264TestSupport
import Testing

extension AllBenchmarks {
/// An RTSP viewer (TCP interleaved) joining a live stream mid-GOP: milliseconds from its
/// DESCRIBE to the arrival of its first complete decodable frame (an IDR access unit, read by
/// ``RTSPJoinViewer``), on `h264 relay FILE --loop --rtsp 127.0.0.1:0` (which keeps the GOP: a
/// joiner is written the kept IDR at once) against gst-rtsp-server serving the same access
/// units (Scripts/gst-rtsp-server.py `--matroska`: one shared pipeline, so a joiner waits for
/// the next IDR). The source is ``LongGOPCamera`` (an IDR every 3 s). Both servers run side by
/// side, each with a watching viewer that tells where its stream is in the GOP; the joins
/// alternate between the servers (ABBA), and each pair joins at the same GOP position, the
/// positions spread over the GOP. Real-time figures of subprocesses on loopback.
@Suite("RTSPJoin")
struct RTSPJoinBenchmarks {
    /// Joins per server; the figures are their medians.
    static let joins = Bench.isDebugBuild ? 3 : 9

    /// The GOP position (access units after the IDR) at which join `index` of ``joins`` happens:
    /// spread evenly from 5 to 85 of the 90.
    static func position(_ index: Int) -> Int {
        5 + index * (LongGOPCamera.keyframeInterval - 10) / max(joins - 1, 1)
    }

    /// One side: its URL and its watching viewer.
    struct Side {
        var name: String
        var url: String
        var port: Int
        var watcher: RTSPJoinViewer
    }

    static func port(of url: String) throws -> Int {
        try #require(Int(String(url.dropFirst("rtsp://127.0.0.1:".count).prefix { $0 != "/" })), "\(url)")
    }

    /// Waits until `side`'s watcher is at GOP position `position` (reading both watchers), then
    /// joins a viewer and reads until it has its first complete IDR access unit: its
    /// milliseconds from DESCRIBE.
    static func join(_ side: Side, at position: Int, watchers: [RTSPJoinViewer]) throws -> Double {
        try RTSPJoinViewer.pump(watchers, timeout: .seconds(10)) { side.watcher.gopPosition == position }
        let joiner = try RTSPJoinViewer(url: side.url, port: side.port)
        defer { joiner.close() }
        try RTSPJoinViewer.pump(watchers + [joiner], timeout: .seconds(10)) { joiner.firstFrameAt != nil }
        return try #require(joiner.joinMilliseconds)
    }

    /// `relay_rtsp_join_first_frame_ms` = our median; `relay_rtsp_join_first_frame_vs_gstreamer`
    /// = our median ÷ gst-rtsp-server's (goal ≤ 0.5).
    @Test(.timeLimit(.minutes(5))) func rtspJoinVersusGStreamer() throws {
        let camera = try LongGOPCamera.files()
        let relay = try LoggingProcess(executable: ServeProcess.h264Executable,
                                       ["relay", camera.annexB, "--loop", "--rtsp", "127.0.0.1:0", "--quiet"], untilListening: "rtsp")
        defer { relay.kill() }
        let ourURL = try #require(relay.events(named: "listening").compactMap { $0["url"] }.first { $0.hasPrefix("rtsp://") }, "\(relay.stderr)")
        let gstreamer = try GStreamerRTSPServer(["--matroska", camera.matroska])
        defer { gstreamer.kill() }
        let ours = Side(name: "h264 relay", url: ourURL, port: try Self.port(of: ourURL),
                        watcher: try RTSPJoinViewer(url: ourURL, port: try Self.port(of: ourURL)))
        let theirs = Side(name: "gst-rtsp-server", url: gstreamer.url, port: try Self.port(of: gstreamer.url),
                          watcher: try RTSPJoinViewer(url: gstreamer.url, port: try Self.port(of: gstreamer.url)))
        let watchers = [ours.watcher, theirs.watcher]
        var ourTimes: [Double] = [], theirTimes: [Double] = []
        for index in 0..<Self.joins {
            let position = Self.position(index)
            if index % 2 == 0 {
                ourTimes.append(try Self.join(ours, at: position, watchers: watchers))
                theirTimes.append(try Self.join(theirs, at: position, watchers: watchers))
            } else {
                theirTimes.append(try Self.join(theirs, at: position, watchers: watchers))
                ourTimes.append(try Self.join(ours, at: position, watchers: watchers))
            }
        }
        #expect(relay.stop() == 0)
        let ourMedian = Bench.median(ourTimes), theirMedian = Bench.median(theirTimes)
        func spread(_ times: [Double]) -> String {
            String(format: "%.1f–%.1f ms", times.min() ?? .nan, times.max() ?? .nan)
        }
        let source = "1280x720 30 fps, an IDR every \(LongGOPCamera.keyframeInterval) frames; \(Self.joins) joins per server at GOP positions "
            + (0..<Self.joins).map { "\(Self.position($0))" }.joined(separator: ",")
        BenchmarkReport.shared.record(
            "relay_rtsp_join_first_frame_ms", ourMedian, goal: "report",
            detail: String(format: "h264 relay --rtsp: DESCRIBE to the last byte of the first complete IDR access unit, median %.1f ms (", ourMedian)
                + spread(ourTimes) + "); " + source)
        BenchmarkReport.shared.record(
            "relay_rtsp_join_first_frame_vs_gstreamer", ourMedian / theirMedian, goal: "≤ 0.5",
            detail: String(format: "h264 relay median %.1f ms (", ourMedian) + spread(ourTimes)
                + String(format: ") vs gst-rtsp-server median %.0f ms (", theirMedian) + spread(theirTimes) + "), joins interleaved; " + source)
    }
}
}
