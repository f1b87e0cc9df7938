import H264
import H264Streaming
import H264TestSupport
import NIOCore
import NIOPosix
import Testing

/// A task that prefers an `EventLoopExecutor` runs on the loop's thread: its own code, and a
/// file player paced on that loop, frame after frame.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct EventLoopExecutorTests {
    /// Runs on whichever executor its caller's task prefers (a nonisolated async function).
    static func onLoop(_ loop: any EventLoop) async -> Bool { loop.inEventLoop }

    @Test func aPreferringTaskRunsOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let elsewhere = await Task { await Self.onLoop(loop) }.value
        let there = await Task(executorPreference: EventLoopExecutor(loop)) { await Self.onLoop(loop) }.value
        #expect(!elsewhere && there)
        try await group.shutdownGracefully()
    }

    @Test func aFilePlayedOnItsLoopHandsOutEveryFrameThere() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let path = try TestFixtures.path("flv/x264_bframes_320x192_9f.264")
        let seen = try await Task(executorPreference: EventLoopExecutor(loop)) {
            var seen: [Bool] = []
            for try await _ in AnnexBFilePlayer(path: path, framesPerSecond: 120, eventLoop: loop) { seen.append(loop.inEventLoop) }
            return seen
        }.value
        #expect(seen == Array(repeating: true, count: 9))
        try await group.shutdownGracefully()
    }
}
