import Dispatch
import H264
@testable import H264Decoder
import H264SessionCore
import H264TestSupport
import Testing

/// The decoder's side of the shared session core: no output after invalidate or release, the
/// bounded `frames`, invalidate from many tasks, one error code, and `formatDescription`.
@Suite(.ownThread) struct DecoderSessionCoreTests {
    static func units(_ count: Int = 10) throws -> [AccessUnit] {
        Array(AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("conformance/BA_MW_D.264")).prefix(count))
    }

    /// The first frame holds the decoding queue in the handler while the session is
    /// invalidated: it finishes, no later frame is delivered, `frames` finishes empty.
    @Test func noOutputAfterInvalidate() async throws {
        let collector = Collector<DecodedFrame>()
        let entered = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1), realTime: true)) { frame in
            collector.append(frame)
            if collector.count == 1 { entered.signal(); gate.wait() }
        }
        let stream = session.frames
        for unit in try Self.units(20) { try session.decode(unit) }
        entered.wait()
        session.invalidate()
        gate.signal()
        session.waitForQueue()
        #expect(collector.count == 1)
        var yielded = 0
        for await _ in stream { yielded += 1 }
        #expect(yielded == 0)
        let error = #expect(throws: MediaError.self) { try session.decode(try Self.units(1)[0]) }
        #expect(error?.code == .invalidState && error?.message == "decode after invalidate")
    }

    /// Releasing the last reference while the handler holds the queue: the queued work does not
    /// keep the session alive, and nothing is delivered after the release.
    @Test func noOutputAfterRelease() throws {
        let collector = Collector<DecodedFrame>()
        let entered = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        weak var weakSession: DecoderSession?
        let jobs: JobQueue<QueuedJob>
        do {
            let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1), realTime: true)) { frame in
                collector.append(frame)
                if collector.count == 1 { entered.signal(); gate.wait() }
            }
            weakSession = session
            jobs = session.jobs
            for unit in try Self.units(20) { try session.decode(unit) }
            entered.wait()
        }
        #expect(weakSession == nil)
        gate.signal()
        jobs.sync {}
        #expect(collector.count == 1)
    }

    /// A consumer that does not read `frames`: it holds the newest `limit` frames, the others
    /// are dropped and counted; the handler sees every frame.
    @Test func anUnreadFramesSequenceIsBounded() async throws {
        var configuration = DecoderConfiguration(threads: .count(1))
        configuration.frameBuffering = .keepingNewest(3)
        let handled = Collector<DecodedFrame>()
        let session = try DecoderSession(configuration: configuration, outputHandler: handled.handler)
        let stream = session.frames
        for (i, unit) in try Self.units(10).enumerated() { try session.decode(unit, presentationTimeStamp: .milliseconds(i)) }
        try session.waitForAsynchronousFrames()
        #expect(handled.count == 10)
        #expect(session.droppedFrameCount == 7)
        session.invalidate()
        var kept: [Duration] = []
        for await frame in stream { kept.append(frame.presentationTimeStamp) }
        #expect(kept == [.milliseconds(7), .milliseconds(8), .milliseconds(9)])
    }

    @Test func aBufferingLimitOutOfRangeIsAConfigurationError() throws {
        var configuration = DecoderConfiguration()
        configuration.frameBuffering = .keepingNewest(0)
        let error = #expect(throws: MediaError.self) { try DecoderSession(configuration: configuration) }
        #expect(error?.code == .invalidConfiguration && error?.field == "frameBuffering")
        let session = try DecoderSession()
        #expect((#expect(throws: MediaError.self) { try session.configure { $0.threads = .count(0) } })?.code == .invalidConfiguration)
        session.invalidate()
    }

    /// Invalidate from 32 tasks while 32 others make calls: every failing call throws
    /// `invalidState`, and the session ends invalidated with `frames` done.
    @Test(.timeLimit(.minutes(1)))
    func invalidateFromManyTasks() async throws {
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1)))
        let stream = session.frames
        let units = try Self.units(5)
        for unit in units { try session.decode(unit) }
        let codes = Collector<MediaError.Code>()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<64 {
                group.addTask {
                    do throws(MediaError) {
                        switch i % 4 {
                        case 0, 2: session.invalidate()
                        case 1: try session.finishDelayedFrames()
                        default: try session.waitForAsynchronousFrames()
                        }
                    } catch {
                        codes.append(error.code)
                    }
                }
            }
        }
        #expect(session.state == .invalidated)
        #expect(codes.all.allSatisfy { $0 == .invalidState })
        for await _ in stream {}
    }

    /// `formatDescription`: the format of the compressed stream the session works on now — the
    /// one given at creation, then that of the latest access unit that carries one.
    @Test func formatDescriptionIsTheCurrentCompressedFormat() throws {
        let units = try Self.units(3)
        let format = try #require(units[0].formatDescription)
        #expect(try DecoderSession().formatDescription == nil)
        let given = try DecoderSession(formatDescription: format)
        #expect(given.formatDescription == format)
        given.invalidate()
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1)))
        #expect(session.state == .created)
        try session.configure { $0.realTime = true }
        #expect(session.state == .configured)
        try session.decode(units[0])
        #expect(session.state == .decoding)
        #expect(session.formatDescription == format)
        try session.waitForAsynchronousFrames()
        session.invalidate()
    }
}
