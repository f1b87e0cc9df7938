import H264Streaming
import H264TestSupport
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

    @Test func offersHTTP2ByALPNAndHTTP1ToWhoAsks() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = HLSServer.Configuration()
        configuration.tls = try RTSPTLSIdentity(certificateChainFile: TestFixtures.path("tls/rtsps-test.pem"),
                                                privateKeyFile: TestFixtures.path("tls/rtsps-test.key"))
        let server = try await HLSServer.start(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
        let stream = HLSLiveStream()
        server.mount(path: "/live", stream: stream)
        for frame in MP4RecorderSinkTests.frames(count: 30) { try stream.append(frame) }
        let base = "https://127.0.0.1:\(server.port)/live/"
        #expect(try Self.curl(base + "index.m3u8", version: "--http2") == "2 200 application/vnd.apple.mpegurl")
        #expect(try Self.curl(base + "index.m3u8", version: "--http1.1") == "1.1 200 application/vnd.apple.mpegurl")
        #expect(try Self.curl(base + "init-0.mp4", version: "--http2") == "2 200 video/mp4")
        #expect(try Self.curl(base + "nothing.m4s", version: "--http2").hasPrefix("2 404"))
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
