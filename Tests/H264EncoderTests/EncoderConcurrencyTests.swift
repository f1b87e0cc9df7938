import Dispatch
import H264
@testable import H264Encoder
import H264TestSupport
import Testing

/// The encoder's side of the one concurrency model: async waits beside the blocking ones, a
/// `frames` that waits for its consumer or drops to a keyframe, and a throwing output handler.
@Suite(.ownThread) struct EncoderConcurrencyTests {
    struct HandlerFailed: Error, Equatable { var frame: Int }

    func frame(_ i: Int) throws -> VideoFrame {
        try makeFrame(Cars.frames[i % Cars.frameCount], width: Cars.width, height: Cars.height, format: .i420)
    }

    func encode(_ session: EncoderSession, _ range: Range<Int>) throws {
        for i in range { try session.encode(try frame(i), presentationTimeStamp: .milliseconds(i * 100) / 3) }
    }

    /// `completeFramesAsync()` returns after every frame was delivered, as `completeFrames()`.
    @Test(.timeLimit(.minutes(1)))
    func completeFramesAsyncDeliversEveryFrame() async throws {
        let output = Collector<EncodedFrame>()
        let session = try EncoderSession(width: 320, height: 240, configuration: EncoderConfiguration(), outputHandler: output.handler)
        try encode(session, 0..<20)
        try await session.completeFramesAsync()
        #expect(output.count == 20)
        #expect(output.all.map(\.presentationTimeStamp).sorted() == (0..<20).map { .milliseconds($0 * 100) / 3 })
        session.invalidate()
    }

    /// The async waits do not block a thread of the cooperative pool: 64 tasks wait on a queue
    /// held by the output handler, then one more task lets the queue go — it gets a thread, so
    /// every wait returns. (Blocking waits would take every pool thread and never return.)
    @Test(.timeLimit(.minutes(1)))
    func asyncWaitsLeaveCooperativeThreadsFree() async throws {
        let gate = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        let delivered = Locked(0)
        let session = try EncoderSession(width: 320, height: 240, configuration: .ultraLowLatency) { _ in
            if delivered.withLock({ $0 += 1; return $0 }) == 1 { held.signal(); gate.wait() }
        }
        try encode(session, 0..<4)
        held.wait()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<64 {
                group.addTask {
                    switch i % 3 {
                    case 0: try await session.waitForQueuedFramesAsync(downTo: 0)
                    case 1: try await session.waitForQueuedFramesAsync()
                    default: try await session.completeFramesAsync()
                    }
                    return i
                }
            }
            group.addTask { gate.signal(); return -1 }
            var finished: [Int] = []
            for try await i in group { finished.append(i) }
            return finished
        }
        #expect(results.count == 65)
        #expect(delivered.withLock { $0 } == 4)
        #expect(session.jobs.unfinishedJobs == 0)
        session.invalidate()
    }

    /// `waitForQueuedFramesAsync(downTo:)` resumes once at most that many frames wait: with the
    /// third output held in the handler, 5 queued frames wait down to 3 (frame 2 in the
    /// handler, 3 and 4 queued), not further.
    @Test(.timeLimit(.minutes(1)))
    func waitForQueuedFramesAsyncDownToResumesAtTheCount() async throws {
        let gate = DispatchSemaphore(value: 0)
        let delivered = Locked(0)
        let session = try EncoderSession(width: 320, height: 240, configuration: .ultraLowLatency) { _ in
            if delivered.withLock({ $0 += 1; return $0 }) == 3 { gate.wait() }
        }
        try encode(session, 0..<5)
        try await session.waitForQueuedFramesAsync(downTo: 3)
        #expect(session.jobs.unfinishedJobs == 3)
        gate.signal()
        try await session.waitForQueuedFramesAsync(downTo: 0)
        #expect(delivered.withLock { $0 } == 5)
        session.invalidate()
    }

    /// A throwing output handler that throws at the third frame: the handler is not called
    /// again, `frames` finishes after the two frames before, and every later call — the async
    /// complete, `encode`, the waits — throws `outputHandlerFailed`; `outputHandlerError` is
    /// the handler's own error.
    @Test(.timeLimit(.minutes(1)))
    func aThrowingOutputHandlerEndsTheOutput() async throws {
        let calls = Locked(0)
        let session = try EncoderSession(width: 320, height: 240, configuration: .ultraLowLatency, throwingOutputHandler: { _ in
            let call = calls.withLock { $0 += 1; return $0 }
            if call == 3 { throw HandlerFailed(frame: 2) }
        })
        let stream = session.frames
        // The handler may already have thrown while frames are still being fed: `encode` then
        // throws `outputHandlerFailed` (checked below), and feeding stops there.
        do { try encode(session, 0..<10) } catch { #expect((error as? MediaError)?.code == .outputHandlerFailed, "\(error)") }
        let error = await #expect(throws: MediaError.self) { try await session.completeFramesAsync() }
        #expect(error?.code == .outputHandlerFailed && error?.field == "outputHandler")
        #expect(calls.withLock { $0 } == 3)
        #expect(session.outputHandlerError as? HandlerFailed == HandlerFailed(frame: 2))
        var yielded: [Int] = []
        for await frame in stream { yielded.append(frameIndex(frame)) }
        #expect(yielded == [0, 1])
        let again = #expect(throws: MediaError.self) { try session.encode(try frame(10), presentationTimeStamp: .seconds(1)) }
        #expect(again?.code == .outputHandlerFailed)
        await #expect(throws: MediaError.self) { try await session.waitForQueuedFramesAsync(downTo: 0) }
        #expect(throws: MediaError.self) { try session.waitForQueuedFrames() }
        session.invalidate()
    }

    /// `.waitingForConsumer(2)`: with nobody reading, the encoding queue stops at the third
    /// output (28 frames stay queued); a consumer then reads all 30 frames in order, none dropped.
    @Test(.timeLimit(.minutes(1)))
    func waitingForConsumerHoldsTheEncodingQueue() async throws {
        var configuration = EncoderConfiguration.ultraLowLatency
        configuration.frameBuffering = .waitingForConsumer(2)
        let thirdOutput = DispatchSemaphore(value: 0)
        let delivered = Locked(0)
        let session = try EncoderSession(width: 320, height: 240, configuration: configuration) { _ in
            if delivered.withLock({ $0 += 1; return $0 }) == 3 { thirdOutput.signal() }
        }
        let stream = session.frames
        try encode(session, 0..<30)
        thirdOutput.wait()
        // Frames 0 and 1 wait in `frames`, frame 2's output waits for room: its job is unfinished.
        #expect(session.jobs.unfinishedJobs == 28)
        #expect(stream.waitingCount == 2)
        async let complete: Void = session.completeFramesAsync()
        var read: [Int] = []
        for await frame in stream {
            read.append(frameIndex(frame))
            if read.count == 30 { break }
        }
        try await complete
        #expect(read == Array(0..<30))
        #expect(session.droppedFrameCount == 0)
        session.invalidate()
    }
}
