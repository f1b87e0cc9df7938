import H264Streaming
import H264TestSupport
import MediaContainers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// `HLSServer` over real sockets on 127.0.0.1, with an `HLSLiveStream` fed the conformance
/// stream's frames (25 a second, an IDR every 10): what it serves, with which headers; blocking
/// reloads held until their part is appended; the answers for bad requests; the bounds.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct HLSServerTests {
    /// A server on a free port with `stream` at `/live`, and a client connected to it.
    final class Fixture {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let stream: HLSLiveStream
        let server: HLSServer
        let client: HTTPTestClient

        init(stream: HLSLiveStream = HLSLiveStream(), configuration: HLSServer.Configuration = .init()) async throws {
            self.stream = stream
            server = try await HLSServer.start(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
            server.mount(path: "/live", stream: stream)
            client = try await HTTPTestClient.connect(port: server.port, group: group)
        }

        func stop() async {
            await client.close()
            await server.shutdown()
            try? await group.shutdownGracefully()
        }

        /// Appends the test stream's frames (`MP4RecorderSinkTests.frames(count:)`) of `range`, each
        /// stamped 40 ms after the one before; returns how many appends made something new.
        @discardableResult
        func append(_ range: Range<Int>) throws -> Int {
            let frames = MP4RecorderSinkTests.frames(count: range.upperBound)
            var made = 0
            for index in range {
                let wallClock = Duration.seconds(1_800_000_000) + .milliseconds(40 * index)
                if try stream.append(frames[index].compressedFrame, wallClock: wallClock) { made += 1 }
            }
            return made
        }

        /// Appends 6.4 s (frames 0…159: the three whole segments the first playlist waits for,
        /// and a part of the next), gets the playlist and returns its preload hint's URI.
        func preloadHint() async throws -> String {
            try append(0..<160)
            let playlist = try await client.get("/live/index.m3u8")
            return try #require(HLSServerTests.attribute("URI", ofTag: "#EXT-X-PRELOAD-HINT", in: playlist.text).first)
        }
    }

    /// Runs `body` with a fixture, then stops it (also when `body` throws).
    static func withFixture(stream: HLSLiveStream = HLSLiveStream(), configuration: HLSServer.Configuration = .init(),
                            _ body: (Fixture) async throws -> Void) async throws {
        let fixture = try await Fixture(stream: stream, configuration: configuration)
        do { try await body(fixture) } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
    }

    /// The values of `attribute` (`URI`) in the tags of `playlist` starting with `tag`.
    static func attribute(_ attribute: String, ofTag tag: String, in playlist: String) -> [String] {
        playlist.split(separator: "\n").filter { $0.hasPrefix(tag) }.compactMap { line in
            guard let start = line.range(of: "\(attribute)=\"") else { return nil }
            return line[start.upperBound...].split(separator: "\"").first.map(String.init)
        }
    }

    /// The CORS headers every answer carries.
    static func expectCORS(_ response: HTTPTestClient.Response, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.headers["Access-Control-Allow-Origin"] == ["*"], sourceLocation: sourceLocation)
        #expect(response.headers["Access-Control-Allow-Methods"] == ["GET, HEAD, OPTIONS"], sourceLocation: sourceLocation)
        #expect(!response.headers["Access-Control-Allow-Headers"].isEmpty, sourceLocation: sourceLocation)
        #expect(!response.headers["Access-Control-Expose-Headers"].isEmpty, sourceLocation: sourceLocation)
    }

    @Test func servesThePlaylistInitSegmentAndPartsWithTheirHeaders() async throws {
        try await Self.withFixture { fixture in
            try fixture.append(0..<170)  // segments 0…2, and three parts of segment 3 (the parts the playlist lists)
            let playlist = try await fixture.client.get("/live/index.m3u8")
            #expect(playlist.status == .ok)
            #expect(playlist.headers["Content-Type"] == ["application/vnd.apple.mpegurl"])
            #expect(playlist.headers["Cache-Control"] == ["no-cache"])
            #expect(playlist.headers["Content-Length"] == [String(playlist.body.count)])
            #expect(playlist.text.hasPrefix("#EXTM3U\n"))
            Self.expectCORS(playlist)
            let initSegment = try #require(Self.attribute("URI", ofTag: "#EXT-X-MAP", in: playlist.text).first)
            let parts = Self.attribute("URI", ofTag: "#EXT-X-PART:", in: playlist.text)
            #expect(parts.count >= 2)
            // Same connection throughout: kept alive.
            for name in [initSegment] + parts.prefix(2) {
                let resource = try await fixture.client.get("/live/" + name)
                #expect(resource.status == .ok, "\(name)")
                #expect(!resource.body.isEmpty, "\(name)")
                #expect(resource.headers["Cache-Control"] == ["public, max-age=3600, immutable"], "\(name)")
                #expect(resource.headers["Content-Length"] == [String(resource.body.count)], "\(name)")
                #expect(resource.headers["Content-Type"].first?.hasPrefix("video/") == true, "\(name)")
                Self.expectCORS(resource)
            }
            let head = try await fixture.client.get("/live/index.m3u8", method: .HEAD)
            #expect(head.status == .ok && head.body.isEmpty)
            #expect(head.headers["Content-Length"] == [String(playlist.body.count)])
            #expect(fixture.server.connectionCount == 1)
        }
    }

    @Test func aBlockingReloadIsAnsweredOnlyOnceItsPartIsAppended() async throws {
        try await Self.withFixture { fixture in
            let hint = try await fixture.preloadHint()
            var next = 160
            // part-M-P.m4s: the next part is part P of segment M.
            let numbers = hint.dropFirst("part-".count).dropLast(".m4s".count).split(separator: "-").compactMap { Int($0) }
            try #require(numbers.count == 2, "\(hint)")
            fixture.client.send(.GET, "/live/index.m3u8?_HLS_msn=\(numbers[0])&_HLS_part=\(numbers[1])")
            #expect(BoundedPolling.waitFor(seconds: 10) { fixture.stream.waitingRequests == 1 })
            // The playlist above is the one response so far.
            var appended = 0
            while fixture.client.received == 1 {
                try #require(next < 200, "the part never came")
                let made = try fixture.append(next..<(next + 1))
                next += 1
                appended += 1
                if made == 0 {
                    // Nothing new: the request still waits, unanswered.
                    #expect(fixture.stream.waitingRequests == 1 && fixture.client.received == 1)
                } else {
                    // Woken: answered, or waiting again.
                    #expect(BoundedPolling.waitFor(seconds: 10) { fixture.client.received == 2 || fixture.stream.waitingRequests == 1 })
                }
            }
            #expect(appended >= 1)
            let answer = try #require(await fixture.client.response())
            #expect(answer.status == .ok)
            #expect(Self.attribute("URI", ofTag: "#EXT-X-PART:", in: answer.text).contains(hint))
            #expect(fixture.stream.waitingRequests == 0)
        }
    }

    @Test func aPreloadHintedPartIsServedOnceWritten() async throws {
        try await Self.withFixture { fixture in
            let hint = try await fixture.preloadHint()
            var next = 160
            fixture.client.send(.GET, "/live/" + hint)
            #expect(BoundedPolling.waitFor(seconds: 10) { fixture.stream.waitingRequests == 1 })
            #expect(fixture.client.received == 1)
            while fixture.client.received == 1 {
                try #require(next < 200, "the part never came")
                if try fixture.append(next..<(next + 1)) > 0 {
                    #expect(BoundedPolling.waitFor(seconds: 10) { fixture.client.received == 2 || fixture.stream.waitingRequests == 1 })
                }
                next += 1
            }
            let part = try #require(await fixture.client.response())
            #expect(part.status == .ok && !part.body.isEmpty)
            #expect(part.headers["Cache-Control"] == ["public, max-age=3600, immutable"])
        }
    }

    @Test func aMediaSequenceFarAheadAndAMalformedQueryAre400() async throws {
        try await Self.withFixture { fixture in
            try fixture.append(0..<30)
            let farAhead = try await fixture.client.get("/live/index.m3u8?_HLS_msn=1000")
            #expect(farAhead.status == .badRequest)
            Self.expectCORS(farAhead)
            let partWithoutSequence = try await fixture.client.get("/live/index.m3u8?_HLS_part=1")
            #expect(partWithoutSequence.status == .badRequest)
            let notANumber = try await fixture.client.get("/live/index.m3u8?_HLS_msn=x")
            #expect(notANumber.status == .badRequest)
            #expect(fixture.stream.waitingRequests == 0)
        }
    }

    @Test func unknownPathsAndResourcesAre404() async throws {
        try await Self.withFixture { fixture in
            try fixture.append(0..<30)
            for uri in ["/other/index.m3u8", "/index.m3u8", "/live/", "/live/seg-99999.m4s", "/live/readme.txt"] {
                let answer = try await fixture.client.get(uri)
                #expect(answer.status == .notFound, "\(uri)")
                Self.expectCORS(answer)
            }
            fixture.server.unmount(path: "/live")
            #expect(try await fixture.client.get("/live/index.m3u8").status == .notFound)
        }
    }

    @Test func optionsIsAPreflightAndOtherMethodsAre405() async throws {
        try await Self.withFixture { fixture in
            let preflight = try await fixture.client.get("/live/index.m3u8", method: .OPTIONS,
                                                         headers: [("Origin", "http://example.com"), ("Access-Control-Request-Method", "GET")])
            #expect(preflight.status == .noContent)
            Self.expectCORS(preflight)
            for method in [HTTPMethod.POST, .PUT, .DELETE] {
                let answer = try await fixture.client.get("/live/index.m3u8", method: method)
                #expect(answer.status == .methodNotAllowed, "\(method)")
                #expect(answer.headers["Allow"] == ["GET, HEAD, OPTIONS"])
                Self.expectCORS(answer)
            }
        }
    }

    @Test func aWaiterIsReleasedWhenItsClientHangsUp() async throws {
        try await Self.withFixture { fixture in
            try fixture.append(0..<15)
            fixture.client.send(.GET, "/live/index.m3u8?_HLS_msn=2")
            #expect(BoundedPolling.waitFor(seconds: 10) { fixture.stream.waitingRequests == 1 })
            await fixture.client.close()
            #expect(BoundedPolling.waitFor(seconds: 10) { fixture.stream.waitingRequests == 0 })
            #expect(BoundedPolling.waitFor(seconds: 10) { fixture.server.connectionCount == 0 })
        }
    }

    @Test func requestsBeyondTheWaiterLimitAre503() async throws {
        try await Self.withFixture(stream: HLSLiveStream(limits: .init(maximumWaiters: 2))) { fixture in
            try fixture.append(0..<15)
            let others = [try await HTTPTestClient.connect(port: fixture.server.port, group: fixture.group),
                          try await HTTPTestClient.connect(port: fixture.server.port, group: fixture.group)]
            for other in others { other.send(.GET, "/live/index.m3u8?_HLS_msn=2") }
            #expect(BoundedPolling.waitFor(seconds: 10) { fixture.stream.waitingRequests == 2 })
            let refused = try await fixture.client.get("/live/index.m3u8?_HLS_msn=2")
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.headers["Retry-After"] == ["1"])
            Self.expectCORS(refused)
            #expect(others.allSatisfy { $0.received == 0 })
            for other in others { await other.close() }
        }
    }

    @Test func aWaitEndsWith503AfterItsLimit() async throws {
        try await Self.withFixture(stream: HLSLiveStream(limits: .init(waitLimit: .milliseconds(300)))) { fixture in
            try fixture.append(0..<15)
            let clock = ContinuousClock(), start = clock.now
            let answer = try await fixture.client.get("/live/index.m3u8?_HLS_msn=2")
            #expect(answer.status == .serviceUnavailable)
            #expect(clock.now - start >= .milliseconds(300))
            #expect(fixture.stream.waitingRequests == 0)
        }
    }

    @Test func oversizedHeadersAndBodiesCloseTheConnection() async throws {
        try await Self.withFixture { fixture in
            let huge = try await fixture.client.get("/live/index.m3u8", headers: [("X-Filler", String(repeating: "a", count: 20_000))])
            #expect(huge.status == .badRequest)
            #expect(await fixture.client.response() == nil)
            let other = try await HTTPTestClient.connect(port: fixture.server.port, group: fixture.group)
            other.sendWithBody("/live/index.m3u8", bytes: 4096)
            let tooLarge = try #require(await other.response())
            #expect(tooLarge.status == .payloadTooLarge)
            #expect(tooLarge.headers["Connection"] == ["close"])
            #expect(await other.response() == nil)
        }
    }

    @Test func ffprobeReadsEveryFrameOfAFinishedStream() async throws {
        try await Self.withFixture { fixture in
            try fixture.append(0..<125)
            try fixture.stream.finish()
            let url = fixture.server.url(host: "127.0.0.1", path: "/live")
            #expect(url == "http://127.0.0.1:\(fixture.server.port)/live/index.m3u8")
            let probe = try Subprocess.run("timeout", ["60", "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                                                       "-show_entries", "stream=codec_name,nb_read_frames", "-of", "csv=p=0", url])
            // The stream, once as the HLS program's and once on its own.
            let lines = Set(String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n"))
            #expect(lines == ["h264,125"], "\(probe.stderr)")
        }
    }

    @Test func anIdleConnectionIsClosedButNotWhileItsRequestWaits() async throws {
        var configuration = HLSServer.Configuration()
        configuration.idleTimeout = .milliseconds(300)
        // The request waits a second — more than the idle timeout — and is still answered.
        try await Self.withFixture(stream: HLSLiveStream(limits: .init(waitLimit: .seconds(1))), configuration: configuration) { fixture in
            let answer = try await fixture.client.get("/live/index.m3u8?_HLS_msn=0")
            #expect(answer.status == .serviceUnavailable)
            #expect(await fixture.client.response() == nil)
            #expect(BoundedPolling.waitFor(seconds: 10) { fixture.server.connectionCount == 0 })
        }
    }

    @Test func aClientThatNeverFinishesItsRequestIsCutOff() async throws {
        var configuration = HLSServer.Configuration()
        configuration.idleTimeout = .milliseconds(300)
        try await Self.withFixture(configuration: configuration) { fixture in
            fixture.client.sendHeadOnly("/live/index.m3u8")
            #expect(await fixture.client.response() == nil)
            #expect(fixture.client.received == 0)
            #expect(BoundedPolling.waitFor(seconds: 10) { fixture.server.connectionCount == 0 })
        }
    }
}
