import Dispatch
import H264
@testable import H264Decoder
import H264SessionCore
import H264TestSupport
import Testing

/// The decoder's side of the one concurrency model: async waits beside the blocking ones, a
/// bounded `frames` that may wait for its consumer, and a throwing output handler.
@Suite(.ownThread) struct DecoderConcurrencyTests {
    struct HandlerFailed: Error, Equatable {}

    static func units(_ count: Int) throws -> [AccessUnit] {
        Array(AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("conformance/BA_MW_D.264")).prefix(count))
    }

    /// `waitForAsynchronousFramesAsync()` returns after every frame was delivered, delayed ones
    /// included: as many as `waitForAsynchronousFrames()` delivers for the same units.
    @Test(.timeLimit(.minutes(1)))
    func waitForAsynchronousFramesAsyncDeliversEveryFrame() async throws {
        let units = try Self.units(20)
        let blocking = Collector<DecodedFrame>(), async = Collector<DecodedFrame>()
        let reference = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1)), outputHandler: blocking.handler)
        for unit in units { try reference.decode(unit) }
        try reference.waitForAsynchronousFrames()
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1)), outputHandler: async.handler)
        for unit in units { try session.decode(unit) }
        try await session.waitForAsynchronousFramesAsync()
        #expect(async.count == 20)
        #expect(async.all.map { $0.md5() } == blocking.all.map { $0.md5() })
        reference.invalidate()
        session.invalidate()
    }

    /// `waitForQueuedAccessUnitsAsync(downTo:)` resumes once at most that many units wait: with
    /// the fourth frame's output held in the handler, 6 queued units wait down to 3 (unit 3 in
    /// the handler, 4 and 5 queued), not further; let go, down to 0.
    @Test(.timeLimit(.minutes(1)))
    func waitForQueuedAccessUnitsAsyncResumesAtTheCount() async throws {
        let gate = DispatchSemaphore(value: 0)
        let delivered = Locked(0)
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1), realTime: true)) { _ in
            if delivered.withLock({ $0 += 1; return $0 }) == 4 { gate.wait() }
        }
        for unit in try Self.units(6) { try session.decode(unit) }
        try await session.waitForQueuedAccessUnitsAsync(downTo: 3)
        #expect(session.jobs.unfinishedJobs == 3)
        gate.signal()
        try await session.waitForQueuedAccessUnitsAsync(downTo: 0)
        #expect(session.jobs.unfinishedJobs == 0)
        #expect(delivered.withLock { $0 } == 6)
        session.invalidate()
    }

    /// A throwing output handler that throws at the first frame: no more handler calls, no
    /// `frames` element, and `decode` and the waits throw `outputHandlerFailed` from then on.
    @Test(.timeLimit(.minutes(1)))
    func aThrowingOutputHandlerEndsTheOutput() async throws {
        let calls = Locked(0)
        let session = try DecoderSession(format: nil, configuration: DecoderConfiguration(threads: .count(1), realTime: true),
                                         throwingOutputHandler: { _ in
                                             calls.withLock { $0 += 1 }
                                             throw HandlerFailed()
                                         })
        let stream = session.frames
        let units = try Self.units(5)
        // The handler may already have thrown while units are still being fed: `decode` then
        // throws `outputHandlerFailed` (checked below), and feeding stops there.
        do { for unit in units { try session.decode(unit) } } catch { #expect((error as? MediaError)?.code == .outputHandlerFailed, "\(error)") }
        let error = await #expect(throws: MediaError.self) { try await session.waitForAsynchronousFramesAsync() }
        #expect(error?.code == .outputHandlerFailed)
        #expect(calls.withLock { $0 } == 1)
        #expect(session.outputHandlerError is HandlerFailed)
        var yielded = 0
        for await _ in stream { yielded += 1 }
        #expect(yielded == 0)
        #expect((#expect(throws: MediaError.self) { try session.decode(units[0]) })?.code == .outputHandlerFailed)
        #expect((#expect(throws: MediaError.self) { try session.waitForAsynchronousFrames() })?.code == .outputHandlerFailed)
        #expect((#expect(throws: MediaError.self) { try session.waitForQueuedAccessUnits(downTo: 0) })?.code == .outputHandlerFailed)
        session.invalidate()
    }

    /// `.waitingForConsumer(1)`: a consumer reading all 20 frames gets every one, in order,
    /// none dropped, through a buffer of one frame.
    @Test(.timeLimit(.minutes(1)))
    func waitingForConsumerLosesNoFrame() async throws {
        var configuration = DecoderConfiguration(threads: .count(1))
        configuration.frameBuffering = .waitingForConsumer(1)
        let session = try DecoderSession(configuration: configuration)
        let stream = session.frames
        for (i, unit) in try Self.units(20).enumerated() { try session.decode(unit, presentationTimeStamp: .milliseconds(i)) }
        async let complete: Void = session.waitForAsynchronousFramesAsync()
        var read: [Duration] = []
        for await frame in stream {
            read.append(frame.presentationTimeStamp)
            if read.count == 20 { break }
        }
        try await complete
        #expect(read == (0..<20).map { .milliseconds($0) })
        #expect(session.droppedFrameCount == 0)
        session.invalidate()
    }
}
