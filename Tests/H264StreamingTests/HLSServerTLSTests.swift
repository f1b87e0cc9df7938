import Foundation
import H264Streaming
import H264TestSupport
import MediaContainers
import NIOCore
import NIOPosix
import Testing

/// `HLSServer` with TLS on 127.0.0.1, asked by curl: a client that offers HTTP/2 by ALPN gets
/// it, one that asks for HTTP/1.1 gets that, with the same answers and headers.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct HLSServerTLSTests {
    /// curl's `HTTP-VERSION STATUS CONTENT-TYPE` for `url` (`--http2` or `--http1.1`), trusting
    /// the test certificate.
    static func curl(_ url: String, version: String) throws -> String {
        let output = try Subprocess.run("timeout", ["30", "curl", "-sk", version, "-o", "/dev/null",
                                                    "-w", "%{http_version} %{http_code} %{content_type}", url])
        return String(decoding: output.stdout, as: UTF8.self)
    }

    /// An HTTPS server on a free port of 127.0.0.1 with the test certificate.
    static func server(group: any EventLoopGroup) async throws -> HLSServer {
        var configuration = HLSServer.Configuration()
        configuration.tls = try RTSPTLSIdentity(certificateChainFile: TestFixtures.path("tls/rtsps-test.pem"),
                                                privateKeyFile: TestFixtures.path("tls/rtsps-test.key"))
        return try await HLSServer.start(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
    }

    @Test func offersHTTP2ByALPNAndHTTP1ToWhoAsks() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await Self.server(group: group)
        let stream = HLSLiveStream()
        server.mount(path: "/live", stream: stream)
        // 2.4 s: the first whole segment (the first playlist waits for one) and a part of the next.
        for frame in MP4RecorderSinkTests.frames(count: 160) { try stream.append(frame) }
        let base = "https://127.0.0.1:\(server.port)/live/"
        #expect(try Self.curl(base + "index.m3u8", version: "--http2") == "2 200 application/vnd.apple.mpegurl")
        #expect(try Self.curl(base + "index.m3u8", version: "--http1.1") == "1.1 200 application/vnd.apple.mpegurl")
        #expect(try Self.curl(base + "init-0.mp4", version: "--http2") == "2 200 video/mp4")
        #expect(try Self.curl(base + "nothing.m4s", version: "--http2").hasPrefix("2 404"))
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func anHTTP2BlockingReloadIsHeldUntilItsPartIsAppended() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await Self.server(group: group)
        let stream = HLSLiveStream()
        server.mount(path: "/live", stream: stream)
        let frames = MP4RecorderSinkTests.frames(count: 300)
        // 6.4 s: the first three whole segments (the first playlist waits for them) and a part of the next.
        for frame in frames[0..<160] { try stream.append(frame) }
        guard case .playlist(let playlist) = await stream.playlist(for: HLSPlaylistRequest(query: "")) else {
            Issue.record("no playlist")
            return
        }
        let hint = try #require(HLSServerTests.attribute("URI", ofTag: "#EXT-X-PRELOAD-HINT", in: playlist).first)
        let numbers = hint.dropFirst("part-".count).dropLast(".m4s".count).split(separator: "-").compactMap { Int($0) }
        #expect(numbers.count == 2, "\(hint)")
        guard numbers.count == 2 else { return }
        let body = FileManager.default.temporaryDirectory.appendingPathComponent("hls-h2-\(UUID().uuidString).m3u8").path
        defer { try? FileManager.default.removeItem(atPath: body) }
        let url = "https://127.0.0.1:\(server.port)/live/index.m3u8?_HLS_msn=\(numbers[0])&_HLS_part=\(numbers[1])"
        let curl = try Subprocess.launch("curl", ["-sk", "--http2", "-o", body, url])
        #expect(BoundedPolling.waitFor(seconds: 10) { stream.waitingRequests == 1 })
        var next = 160
        while curl.isRunning {
            guard next < frames.count else { Issue.record("the part never came"); break }
            if try stream.append(frames[next]) {
                #expect(BoundedPolling.waitFor(seconds: 10) { !curl.isRunning || stream.waitingRequests == 1 })
            } else {
                #expect(stream.waitingRequests == 1 && curl.isRunning)
            }
            next += 1
        }
        #expect(next > 60)
        #expect(curl.terminationStatus == 0)
        let answer = try String(contentsOfFile: body, encoding: .utf8)
        #expect(HLSServerTests.attribute("URI", ofTag: "#EXT-X-PART:", in: answer).contains(hint))
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
