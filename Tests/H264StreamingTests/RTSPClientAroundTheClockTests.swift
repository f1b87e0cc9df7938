import H264
@testable import H264Streaming
import NIOCore
import NIOPosix
import RTP
import RTSPMessages
import H264TestSupport
import Testing

/// 24/7 recording with ``RTSPClient/Configuration/reconnect``, against the package's own
/// `RTSPServer` on 127.0.0.1: a camera that boots after its recorder (the first connection is
/// retried), a camera that goes silent without closing (the idle timeout makes it lost, and the
/// client reconnects), the gap reported with its duration, and presentation times that go on
/// rising across it.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct RTSPClientAroundTheClockTests {
    /// Reconnection every 50 ms, at most 200 ms apart.
    static let reconnect = RTSPClient.Configuration.Reconnect(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))

    /// A camera: the fixture's frames to `live` every 10 ms (from its first IDR on, looping)
    /// while `silent` is false.
    static func camera(_ live: Broadcaster, silent: Locked<Bool> = Locked(false)) -> Task<Void, Never> {
        Task {
            let frames = StreamingFixtures.stream.frames
            var index = 0
            while !Task.isCancelled {
                if !silent.withLock({ $0 }) {
                    live.broadcast(frames[index % frames.count])
                    index += 1
                }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// A port on 127.0.0.1 with nothing listening: one a server of ours just bound and let go.
    static func freePort(group: any EventLoopGroup) async throws -> Int {
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let port = try #require(server.localAddress?.port)
        await server.shutdown()
        return port
    }

    @Test func openWaitsForAServerThatStartsLater() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let port = try await Self.freePort(group: group)
        var configuration = RTSPClient.Configuration()
        configuration.transport = .tcp
        configuration.reconnect = Self.reconnect
        let opened = Locked(false)
        let opening = Task {
            defer { opened.withLock { $0 = true } }
            return try await RTSPClient.open(url: "rtsp://127.0.0.1:\(port)/live", group: group, configuration: configuration)
        }
        // The scenario: the camera boots 500 ms after its recorder (several tries fail meanwhile).
        try await Task.sleep(for: .milliseconds(500))
        #expect(!opened.withLock { $0 }, "open is still trying while nothing listens")
        let server = try await RTSPServer.start(host: "127.0.0.1", port: port, group: group)
        let camera = Self.camera(server.mount("/live", format: StreamingFixtures.format))
        let client = try await opening.value
        var frames: [RTPReceivedFrame] = []
        for await event in client {
            if case .frame(let received) = event { frames.append(received) }
            if case .disconnected = event { Issue.record("a disconnection on the first connection") }
            if frames.count == 5 { break }
        }
        #expect(frames.count == 5)
        #expect(frames.first?.frame.isKeyframe == true)
        #expect(client.disconnections == 0)
        camera.cancel()
        await client.close()
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func openThrowsTheLastErrorOnceTheTriesRunOut() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let port = try await Self.freePort(group: group)
        var configuration = RTSPClient.Configuration()
        configuration.reconnect = .init(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(100), maximumAttempts: 3)
        let clock = ContinuousClock(), started = clock.now
        let error = await #expect(throws: RTSPClientError.self) {
            try await RTSPClient.open(url: "rtsp://127.0.0.1:\(port)/live", group: group, configuration: configuration)
        }
        #expect(error?.code == .connectionFailed)
        #expect(clock.now - started >= .milliseconds(200), "3 tries, 100 ms apart")
        try await group.shutdownGracefully()
    }

    /// What `open` retries: what a server coming up cures, not what waiting cannot.
    @Test(arguments: [
        (RTSPClientError(.connectionFailed, "no server"), true),
        (RTSPClientError(.connectionClosed, "closed"), true),
        (RTSPClientError(.timeout, "no answer"), true),
        (RTSPClientError(.status, "not published yet", status: RTSPStatus(code: 404, reasonPhrase: "Not Found")), true),
        (RTSPClientError(.status, "starting", status: RTSPStatus(code: 503, reasonPhrase: "Service Unavailable")), true),
        (RTSPClientError(.status, "forbidden", status: RTSPStatus(code: 403, reasonPhrase: "Forbidden")), false),
        (RTSPClientError(.unauthorized, "wrong password"), false),
        (RTSPClientError(.badURL, "not rtsp"), false),
        (RTSPClientError(.redirect, "a loop"), false),
        (RTSPClientError(.tls, "untrusted"), false),
    ])
    func openRetriesOnlyWhatWaitingCures(error: RTSPClientError, retried: Bool) {
        #expect(RTSPClient.isCuredByWaiting(error) == retried)
    }

    @Test func withReconnectTheIdleTimeoutIsTenSecondsUnlessSet() {
        var configuration = RTSPClient.Configuration()
        #expect(configuration.effectiveIdleTimeout == nil)
        configuration.reconnect = Self.reconnect
        #expect(configuration.effectiveIdleTimeout == .seconds(10))
        configuration.idleTimeout = .seconds(3)
        #expect(configuration.effectiveIdleTimeout == .seconds(3))
    }

    /// The camera stops sending (the connection stays open) until the client has given it up:
    /// a disconnection for the idle timeout, a reconnection, the gap (at least the idle
    /// timeout), and presentation times rising throughout, the first after the gap exactly the
    /// gap after the last before.
    @Test(arguments: [RTSPClient.Configuration.Transport.tcp, .udp])
    func aSilentServerIsLostAndReconnected(transport: RTSPClient.Configuration.Transport) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let port = try #require(server.localAddress?.port)
        let silent = Locked(false)
        let camera = Self.camera(server.mount("/live", format: StreamingFixtures.format), silent: silent)
        var configuration = RTSPClient.Configuration()
        configuration.transport = transport
        configuration.idleTimeout = .seconds(1) // longer than the fixture's GOP (an IDR every 60 frames, 600 ms here)
        configuration.reconnect = Self.reconnect
        let client = try await RTSPClient.open(url: "rtsp://127.0.0.1:\(port)/live", group: group, configuration: configuration)
        var kinds: [String] = [], times: [Duration] = [], before: Duration?, gap: Duration?, firstAfter: RTPReceivedFrame?
        for await event in client {
            switch event {
            case .frame(let received):
                times.append(received.frame.presentationTime)
                if gap != nil && firstAfter == nil { firstAfter = received }
                if kinds.last != "frame" { kinds.append("frame") }
                if times.count == 10 && gap == nil { silent.withLock { $0 = true } }
            case .disconnected(let ending):
                #expect(ending == .idle)
                kinds.append("disconnected")
                before = times.max()
                silent.withLock { $0 = false } // the camera is back once it is given up
            case .reconnected: kinds.append("reconnected")
            case .resumed(let duration):
                kinds.append("resumed")
                gap = duration
            default: break
            }
            if firstAfter != nil && times.count >= 20 { break }
        }
        #expect(kinds == ["frame", "disconnected", "reconnected", "resumed", "frame"])
        let reported = try #require(gap)
        #expect(reported >= .seconds(1) && reported < .seconds(10), "the gap: \(reported)")
        #expect(firstAfter?.frame.isKeyframe == true)
        let last = try #require(before)
        #expect(firstAfter?.frame.presentationTime == last + reported, "the times step by the gap")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "presentation times rise: \(times)")
        #expect(client.disconnections == 1)
        camera.cancel()
        await client.close()
        #expect(client.ending == .closed)
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
