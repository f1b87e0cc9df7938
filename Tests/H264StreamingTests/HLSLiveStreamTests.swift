import H264Streaming
import H264TestSupport
import MediaContainers
import Testing

/// `HLSLiveStream` without sockets: waiting requests are woken by the append that makes their
/// answer, stop waiting when their task is cancelled, and are bounded in number; an ended
/// stream answers at once; `HLSSink` feeds and finishes one from a broadcaster.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct HLSLiveStreamTests {
    static func append(_ frames: Range<Int>, to stream: HLSLiveStream) throws {
        let all = MP4RecorderSinkTests.frames(count: frames.upperBound)
        for index in frames { try stream.append(all[index]) }
    }

    @Test func aWaitingRequestStopsWaitingWhenItsTaskIsCancelled() async throws {
        let stream = HLSLiveStream()
        // Nothing appended: no playlist yet.
        let task = Task { await stream.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=0&_HLS_part=0")) }
        #expect(BoundedPolling.waitFor(seconds: 10) { stream.waitingRequests == 1 })
        task.cancel()
        let answer = await task.value
        guard case .unavailable = answer else { Issue.record("not unavailable: \(answer)"); return }
        #expect(stream.waitingRequests == 0)
    }

    @Test func aRequestBeyondTheLimitIsRefusedAtOnce() async throws {
        let stream = HLSLiveStream(limits: .init(maximumWaiters: 1))
        let waiting = Task { await stream.playlist(for: HLSPlaylistRequest(query: "")) }
        #expect(BoundedPolling.waitFor(seconds: 10) { stream.waitingRequests == 1 })
        let refused = await stream.playlist(for: HLSPlaylistRequest(query: ""))
        guard case .unavailable = refused else { Issue.record("not unavailable: \(refused)"); return }
        // The one waiting is answered once a whole segment makes the first playlist (2 s: frame 50 ends it).
        try Self.append(0..<60, to: stream)
        guard case .playlist(let text) = await waiting.value else { Issue.record("no playlist"); return }
        #expect(text.hasPrefix("#EXTM3U"))
    }

    @Test func aFinishedStreamAnswersAtOnceWithItsEnd() async throws {
        let stream = HLSLiveStream()
        try Self.append(0..<30, to: stream)
        let waiting = Task { await stream.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=2")) }
        #expect(BoundedPolling.waitFor(seconds: 10) { stream.waitingRequests == 1 })
        try stream.finish()
        guard case .playlist(let text) = await waiting.value else { Issue.record("no playlist"); return }
        #expect(text.contains("#EXT-X-ENDLIST"))
        #expect(await stream.resource(named: "part-999-0.m4s") == .notFound)
        #expect(stream.waitingRequests == 0)
    }

    @Test func theSinkAppendsTheBroadcastAndFinishesTheStream() async throws {
        let stream = HLSLiveStream()
        let broadcaster = Broadcaster(queueLimit: 300)
        let task = broadcaster.attach(HLSSink(stream))
        for frame in MP4RecorderSinkTests.frames(count: 125) { broadcaster.broadcast(frame) }
        await broadcaster.closeAll(flushing: true)
        let outcome = try await task.value
        #expect(outcome.skippedFrames == 0)
        guard case .playlist(let text) = await stream.playlist(for: HLSPlaylistRequest(query: "")) else {
            Issue.record("no playlist")
            return
        }
        #expect(text.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("#EXTINF") }.count >= 2)
    }
}
