import Foundation
import H264
import HEVC
@testable import H264Encoder
import H264SessionCore
import H264TestSupport
import Testing

/// The lifecycle rules, the same for both codecs: each test runs with x264 and with x265.
@Suite(.ownThread)
struct EncoderLifecycleTests {
    func frame(_ i: Int = 0) throws -> VideoFrame {
        try makeFrame(Cars.frames[i % Cars.frameCount], width: Cars.width, height: Cars.height, format: .i420)
    }

    @Test(arguments: VideoCodec.allCases)
    func stateMachine(codec: VideoCodec) throws {
        let session = try EncoderSession(width: 320, height: 240, configuration: EncoderConfiguration().with(codec))
        #expect(session.state == .created)
        #expect(session.formatDescription == nil)
        try session.configure { $0.averageBitRate = 1_000_000 }
        #expect(session.state == .configured)
        let format = try session.prepare()
        #expect(session.state == .prepared)
        #expect(session.format == format)
        #expect(format.codec == codec)
        #expect(session.formatDescription == format.h264)
        #expect(try session.prepare() == format)
        #expect(throws: MediaError.self) { try session.configure { $0.profile = .main } }
        session.invalidate()
        session.invalidate()
        #expect(session.state == .invalidated)
        let encodeError = #expect(throws: MediaError.self) { try session.encode(try frame(), presentationTimeStamp: .zero) }
        #expect(encodeError?.code == .invalidState)
        #expect((#expect(throws: MediaError.self) { try session.completeFrames() })?.code == .invalidState)
        #expect((#expect(throws: MediaError.self) { try session.prepare() })?.code == .invalidState)
        #expect((#expect(throws: MediaError.self) { try session.setAverageBitRate(1_000_000) })?.code == .invalidState)
    }

    /// The encoder refuses to open — x264: lossless CRF 0 in the High profile, which
    /// `x264_param_apply_profile` rejects; x265: level 1 for 320×240, which `x265_encoder_open`
    /// rejects —: the session is not prepared, keeps its state, and takes a new configuration
    /// that then prepares and encodes.
    @Test(arguments: VideoCodec.allCases)
    func failedPrepareLeavesTheSessionConfigurable(codec: VideoCodec) throws {
        var configuration = EncoderConfiguration.liveCapture.with(codec)
        if codec == .h264 { configuration.constantRateFactor = 0 } else { configuration.level = .fixed(10) }
        let session = try EncoderSession(width: 320, height: 240, configuration: configuration)
        let failure = #expect(throws: MediaError.self) { try session.prepare() }
        #expect(failure?.code == (codec == .h264 ? .invalidConfiguration : .encoderFailed))
        #expect(session.state == .created)
        #expect(session.format == nil)
        try session.configure { $0.constantRateFactor = 23; $0.level = .automatic }
        #expect(session.state == .configured)
        let format = try session.prepare()
        #expect(session.state == .prepared)
        #expect(session.format == format)
        try session.encode(try frame(), presentationTimeStamp: .zero)
        try session.completeFrames()
        session.invalidate()
    }

    /// `frames` read for the first time after `invalidate()` is a stream that has already
    /// finished (before the fix it never finished: the time limit failed the test).
    @Test(.timeLimit(.minutes(1)), arguments: VideoCodec.allCases)
    func framesFirstReadAfterInvalidateFinishesAtOnce(codec: VideoCodec) async throws {
        let session = try EncoderSession(width: 320, height: 240, configuration: .liveCapture.with(codec))
        try session.encode(try frame(), presentationTimeStamp: .zero)
        session.invalidate()
        var count = 0
        for await _ in session.frames { count += 1 }
        #expect(count == 0)
    }

    @Test(arguments: VideoCodec.allCases)
    func switchWithoutPrewarmIsAnError(codec: VideoCodec) throws {
        let session = try EncoderSession(width: 320, height: 240, configuration: EncoderConfiguration().with(codec))
        #expect((#expect(throws: MediaError.self) { try session.switchToPrewarmedSession() })?.code == .invalidState)
    }

    /// completeFrames and both waits would wait for the handler itself: each throws.
    @Test(arguments: VideoCodec.allCases)
    func completeFramesFromTheHandlerIsAnError(codec: VideoCodec) throws {
        let seen = Locked<[MediaError.Code?]>([])
        let box = Locked<EncoderSession?>(nil)
        let session = try EncoderSession(width: 320, height: 240, configuration: .ultraLowLatency.with(codec)) { _ in
            let s = box.withLock { $0 }
            do { try s?.completeFrames() } catch { seen.withLock { $0.append((error as? MediaError)?.code) } }
            do { try s?.waitForQueuedFrames() } catch { seen.withLock { $0.append((error as? MediaError)?.code) } }
            do { try s?.waitForQueuedFrames(downTo: 0) } catch { seen.withLock { $0.append((error as? MediaError)?.code) } }
        }
        box.withLock { $0 = session }
        try session.encode(try frame(), presentationTimeStamp: .zero)
        session.waitForQueue()
        #expect(seen.withLock { $0 } == [.invalidState, .invalidState, .invalidState])
        box.withLock { $0 = nil }
        session.invalidate()
    }

    /// `waitForQueuedFrames(downTo:)` returns once that many frames at most are waiting, and a
    /// frame handed to x264 is released: the producer's array is then written in place, not
    /// copied, even while later frames are still queued.
    @Test(arguments: VideoCodec.allCases)
    func waitForQueuedFramesDownToReleasesHandedOverFrames(codec: VideoCodec) throws {
        let gate = DispatchSemaphore(value: 0)
        let delivered = Locked(0)
        let session = try EncoderSession(width: 320, height: 240, configuration: .ultraLowLatency.with(codec)) { _ in
            // The third frame's output holds the queue until the test lets it go.
            if delivered.withLock({ $0 += 1; return $0 }) == 3 { gate.wait() }
        }
        var pixels = try Cars.frames[0].map { $0 } // storage of its own (not shared with Cars.frames)
        for i in 0..<5 {
            let frame = try VideoFrame(pixelFormat: .i420, width: Cars.width, height: Cars.height,
                                       contiguous: i == 0 ? pixels : Cars.frames[i])
            try session.encode(frame, presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        // Five queued; frames 0 and 1 done, frame 2 held in the handler: three still waiting.
        try session.waitForQueuedFrames(downTo: 3)
        let deliveredBeforeRelease = delivered.withLock { $0 }
        let storage = pixels.withUnsafeBufferPointer { $0.baseAddress }
        pixels[0] &+= 1
        let storageAfterWrite = pixels.withUnsafeBufferPointer { $0.baseAddress }
        gate.signal()
        #expect(deliveredBeforeRelease >= 2 && deliveredBeforeRelease <= 3)
        #expect(storageAfterWrite == storage, "frame 0 was still referenced after it was encoded")
        try session.waitForQueuedFrames(downTo: 0)
        #expect(delivered.withLock { $0 } == 5)
        session.invalidate()
    }

    /// Releasing the last reference with frames queued: no crash, the queued work does not
    /// keep the session alive, and nothing is delivered after the release. The first output
    /// holds the encoding queue (in the handler) until the session is gone; the 19 frames
    /// queued behind it are then dropped, which the queue, drained, shows.
    @Test(arguments: VideoCodec.allCases)
    func releaseWithFramesInFlight(codec: VideoCodec) throws {
        let collector = Collector<EncodedFrame>()
        let entered = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        weak var weakSession: EncoderSession?
        let queue: JobQueue<FrameJob>
        do {
            let session = try EncoderSession(width: 320, height: 240, configuration: .liveCapture.with(codec)) { frame in
                collector.append(frame)
                if collector.count == 1 { entered.signal(); gate.wait() }
            }
            weakSession = session
            queue = session.jobs
            for i in 0..<20 { try session.encode(try frame(i), presentationTimeStamp: .milliseconds(i * 100) / 3) }
            entered.wait()
        }
        #expect(weakSession == nil)
        gate.signal()
        queue.sync {}
        #expect(collector.count == 1)
    }

    /// invalidate twice from two threads while a third encodes: no crash; every encode before
    /// the invalidation is accepted, every one after it throws `invalidState`, and only
    /// accepted frames come out.
    @Test(arguments: VideoCodec.allCases)
    func invalidateFromTwoThreadsDuringEncode(codec: VideoCodec) throws {
        for _ in 0..<5 {
            let delivered = Collector<EncodedFrame>()
            let session = try EncoderSession(width: 320, height: 240, configuration: .liveCapture.with(codec), outputHandler: delivered.handler)
            let frames = try (0..<10).map { try frame($0) }
            let outcomes = Locked<[MediaError.Code?]>([])   // nil: accepted
            DispatchQueue.concurrentPerform(iterations: 3) { worker in
                if worker == 0 {
                    for (i, f) in frames.enumerated() {
                        do throws(MediaError) {
                            try session.encode(f, presentationTimeStamp: .milliseconds(i * 100) / 3)
                            outcomes.withLock { $0.append(nil) }
                        } catch {
                            outcomes.withLock { $0.append(error.code) }
                        }
                    }
                } else {
                    session.invalidate()
                    session.invalidate()
                }
            }
            #expect(session.state == .invalidated)
            let all = outcomes.withLock { $0 }
            let accepted = all.firstIndex { $0 != nil } ?? all.count
            #expect(all.count == frames.count)
            #expect(all[accepted...].allSatisfy { $0 == .invalidState }, "\(all)")
            session.waitForQueue()
            #expect(delivered.count <= accepted)
            #expect(delivered.all.map(frameIndex) == Array(0..<delivered.count))
            #expect((#expect(throws: MediaError.self) { try session.encode(frames[0], presentationTimeStamp: .seconds(1)) })?.code == .invalidState)
        }
    }

    @Test(arguments: VideoCodec.allCases)
    func invalidateFromTheOutputHandler(codec: VideoCodec) throws {
        let box = Locked<EncoderSession?>(nil)
        let count = Locked(0)
        let session = try EncoderSession(width: 320, height: 240, configuration: .ultraLowLatency.with(codec)) { _ in
            count.withLock { $0 += 1 }
            box.withLock { $0 }?.invalidate()
        }
        box.withLock { $0 = session }
        for i in 0..<5 { try? session.encode(try frame(i), presentationTimeStamp: .milliseconds(i * 100) / 3) }
        session.waitForQueue()
        #expect(count.withLock { $0 } == 1)
        #expect(session.state == .invalidated)
        box.withLock { $0 = nil }
    }
}

extension EncoderConfiguration {
    /// This configuration with `codec`.
    func with(_ codec: VideoCodec) -> EncoderConfiguration {
        var c = self
        c.codec = codec
        return c
    }
}

/// The README's library example, on a synthetic moving gradient (no fixtures needed), as written
/// (H.264) and with `codec = .hevc`: every frame is written, and the parameter sets (SPS, PPS;
/// VPS, SPS, PPS) come before each of the three keyframes (frame 0, the forced frame 5, the
/// switched frame). An H.265 session's live bit-rate change opens a new libx265 encoder.
@Test(.ownThread, arguments: [VideoCodec.h264, .hevc])
func readmeExample(codec: VideoCodec) throws {
    let writer = AnnexBWriter()
    let stream = Locked<[UInt8]>([])
    let written = Locked(0)
    var configuration = EncoderConfiguration.Preset.liveCapture.configuration
    configuration.codec = codec
    let (width, height) = codec == .hevc ? (128, 96) : (64, 48)
    let session = try EncoderSession(width: width, height: height, configuration: configuration) { frame in
        stream.withLock { if (try? writer.append(frame, to: &$0)) != nil { written.withLock { $0 += 1 } } }
    }
    let format = try session.prepare()
    #expect(format.codec == codec)
    if codec == .h264 {
        #expect(format.h264?.sequenceParameterSets.count == 1 && format.h264?.pictureParameterSets.count == 1)
    } else {
        #expect(format.hevc != nil)
    }
    for i in 0..<10 {
        var pixels = [UInt8](repeating: 128, count: width * height * 3 / 2)
        for y in 0..<height { for x in 0..<width { pixels[y * width + x] = UInt8(truncatingIfNeeded: x * 3 + y + i * 4) } }
        let frame = try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: pixels)
        try session.encode(frame, presentationTimeStamp: .milliseconds(i * 100) / 3, duration: .milliseconds(100) / 3,
                           forceKeyframe: i == 5)
    }
    try session.setAverageBitRate(200_000)
    let switched = codec == .hevc ? 64 : 32
    try session.prewarm(width: switched, height: switched)
    try session.switchToPrewarmedSession()
    try session.encode(VideoFrame(pixelFormat: .i420, width: switched, height: switched,
                                  contiguous: [UInt8](repeating: 90, count: switched * switched * 3 / 2)),
                       presentationTimeStamp: .milliseconds(1000) / 3)
    try session.completeFrames()
    session.invalidate()
    let bytes = stream.withLock { $0 }
    #expect(written.withLock { $0 } == 11)
    let nalUnits = ReferenceAnnexB.nalUnits(bytes).map { bytes[$0.range.lowerBound] }
    if codec == .h264 {
        let types = nalUnits.map { $0 & 0x1F }
        #expect(types.filter { $0 == 5 }.count == 3)
        #expect(types.filter { $0 == 7 }.count == 3 && types.filter { $0 == 8 }.count == 3)
    } else {
        let types = nalUnits.map { ($0 >> 1) & 0x3F }
        #expect(types.filter { (16...23).contains($0) }.count == 3)
        #expect(types.filter { $0 == 32 }.count == 3 && types.filter { $0 == 33 }.count == 3 && types.filter { $0 == 34 }.count == 3)
    }
}
