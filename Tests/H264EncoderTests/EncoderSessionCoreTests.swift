import Dispatch
import H264
@testable import H264Encoder
import H264TestSupport
import Testing

/// The encoder's side of the shared session core: no output after invalidate, the bounded
/// `frames`, invalidate from many tasks, one error code, and `formatDescription`.
@Suite(.ownThread) struct EncoderSessionCoreTests {
    func frame(_ i: Int) throws -> VideoFrame {
        try makeFrame(Cars.frames[i % Cars.frameCount], width: Cars.width, height: Cars.height, format: .i420)
    }

    /// The first output holds the encoding queue in the handler while the session is
    /// invalidated: it finishes, and none of the 19 frames queued behind it is delivered, to the
    /// handler or to `frames` (which finishes empty: its first element would have been yielded
    /// after the invalidation).
    @Test func noOutputAfterInvalidate() async throws {
        let collector = Collector<EncodedFrame>()
        let entered = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        let session = try EncoderSession(width: 320, height: 240, configuration: .liveCapture) { frame in
            collector.append(frame)
            if collector.count == 1 { entered.signal(); gate.wait() }
        }
        let stream = session.frames
        for i in 0..<20 { try session.encode(try frame(i), presentationTimeStamp: .milliseconds(i * 100) / 3) }
        entered.wait()
        session.invalidate()
        gate.signal()
        session.waitForQueue()
        #expect(collector.count == 1)
        var yielded = 0
        for await _ in stream { yielded += 1 }
        #expect(yielded == 0)
        let error = #expect(throws: MediaError.self) { try session.encode(try frame(20), presentationTimeStamp: .seconds(1)) }
        #expect(error?.code == .invalidState && error?.message == "encode after invalidate")
    }

    /// A consumer that does not read `frames`: it holds at most `limit` frames, the others are
    /// dropped and counted, and a drop runs up to a keyframe — with a keyframe every 4 frames,
    /// the newest 4 kept are the last group (8…11), the oldest 4 the first (0…3); with one
    /// keyframe only (`liveCapture`'s 2 s), the newest policy keeps nothing it could not decode:
    /// nothing. The handler sees every frame.
    @Test(arguments: [(OutputBufferingPolicy.keepingNewest(4), 4, [8, 9, 10, 11]), (.keepingOldest(4), 4, [0, 1, 2, 3]),
                      (.keepingNewest(4), 60, []), (.keepingOldest(4), 60, [0, 1, 2, 3])])
    func anUnreadFramesSequenceIsBoundedAndKeepsWholeGroups(policy: OutputBufferingPolicy, keyframeInterval: Int, kept: [Int]) async throws {
        var configuration = EncoderConfiguration.liveCapture
        configuration.frameBuffering = policy
        configuration.maxKeyFrameInterval = keyframeInterval
        configuration.maxKeyFrameIntervalDuration = nil
        let handled = Collector<EncodedFrame>()
        let session = try EncoderSession(width: 320, height: 240, configuration: configuration, outputHandler: handled.handler)
        let stream = session.frames
        for i in 0..<12 { try session.encode(try frame(i), presentationTimeStamp: .milliseconds(i * 100) / 3) }
        try session.completeFrames()
        #expect(handled.count == 12)
        #expect(handled.all.filter(\.isKeyframe).map(frameIndex) == stride(from: 0, to: 12, by: keyframeInterval).map { $0 })
        #expect(session.droppedFrameCount == 12 - kept.count)
        session.invalidate()
        var read: [Int] = []
        for await frame in stream { read.append(frameIndex(frame)) }
        #expect(read == kept)
    }

    @Test func aBufferingLimitOutOfRangeIsAConfigurationError() throws {
        var configuration = EncoderConfiguration()
        configuration.frameBuffering = .keepingOldest(0)
        let error = #expect(throws: MediaError.self) { try EncoderSession(width: 320, height: 240, configuration: configuration) }
        #expect(error?.code == .invalidConfiguration && error?.field == "frameBuffering")
    }

    /// Invalidate from 32 tasks while 32 others make calls: every invalidate returns, every
    /// failing call throws `invalidState`, and the session ends invalidated with `frames` done.
    @Test(.timeLimit(.minutes(1)))
    func invalidateFromManyTasks() async throws {
        let session = try EncoderSession(width: 320, height: 240, configuration: .liveCapture)
        let stream = session.frames
        for i in 0..<5 { try session.encode(try frame(i), presentationTimeStamp: .milliseconds(i * 100) / 3) }
        let codes = Collector<MediaError.Code>()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<64 {
                group.addTask {
                    do throws(MediaError) {
                        switch i % 4 {
                        case 0, 2: session.invalidate()
                        case 1: try session.setAverageBitRate(1_000_000 + i)
                        default: try session.waitForQueuedFrames(downTo: 0)
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

    /// `formatDescription`: the format of the compressed stream the session works on now —
    /// nil before x264 opens, prepare's, and after a size change the new encoder's, which the
    /// frames after the change carry.
    @Test func formatDescriptionIsTheCurrentCompressedFormat() throws {
        let output = Collector<EncodedFrame>()
        let session = try EncoderSession(width: 320, height: 240, configuration: .liveCapture, outputHandler: output.handler)
        #expect(session.formatDescription == nil)
        let prepared = try session.prepare()
        #expect(session.format == prepared)
        #expect(session.formatDescription == prepared.h264)
        try session.encode(try frame(0), presentationTimeStamp: .zero)
        let small = try VideoFrame(pixelFormat: .i420, width: 160, height: 120,
                                   contiguous: [UInt8](repeating: 128, count: 160 * 120 * 3 / 2))
        try session.encode(small, presentationTimeStamp: .seconds(1))
        try session.waitForQueuedFrames()
        let current = try #require(session.format)
        #expect(current != prepared)
        try session.completeFrames()
        #expect(output.all.last?.format == current)
        session.invalidate()
    }
}
