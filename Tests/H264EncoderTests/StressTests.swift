import Foundation
import H264
import H264Encoder
import H264TestSupport
import Testing

/// Sessions under concurrent use. Every assertion is about what must hold whatever the thread
/// interleaving (no sleeps: threads meet only through the session and `Locked`, a pthread mutex,
/// which TSan understands). Run clean under `swift test --sanitize=thread` in CI.
@Suite(.ownThread) struct StressTests {
    static let width = 64, height = 48

    /// A frame whose content changes with `index` (a moving ramp), so that x264 has work to do.
    static func frame(_ index: Int) throws(MediaError) -> VideoFrame {
        var pixels = [UInt8](repeating: 128, count: width * height * 3 / 2)
        for y in 0..<height {
            for x in 0..<width { pixels[y * width + x] = UInt8(truncatingIfNeeded: x * 3 + y * 2 + index * 5) }
        }
        return try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: pixels)
    }

    static func pts(_ index: Int) -> Duration { .milliseconds(index * 100) / 3 }

    @Test func severalSessionsOnSeveralThreads() throws {
        let sessions = 4, framesEach = 12
        let collectors = (0..<sessions).map { _ in Collector<EncodedFrame>() }
        let thrown = Locked<[MediaError]>([])
        DispatchQueue.concurrentPerform(iterations: sessions) { index in
            do throws(MediaError) {
                let collector = collectors[index]
                let session = try EncoderSession(width: Self.width, height: Self.height, configuration: .liveCapture,
                                                 outputHandler: { collector.append($0) })
                for i in 0..<framesEach {
                    try session.encode(Self.frame(i + index), presentationTimeStamp: Self.pts(i), forceKeyframe: i == 6)
                }
                try session.completeFrames()
                session.invalidate()
            } catch {
                thrown.withLock { $0.append(error) }
            }
        }
        #expect(thrown.withLock { $0 }.isEmpty)
        for collector in collectors {
            let frames = collector.all
            #expect(frames.count == framesEach)
            #expect(frames.map(\.presentationTimeStamp) == (0..<framesEach).map(Self.pts))
            #expect(frames.first?.isKeyframe == true)
            #expect(frames.count > 6 && frames[6].isKeyframe, "the forced keyframe")
        }
    }

    @Test func oneSessionHitFromSeveralThreads() throws {
        for round in 0..<3 {
            let collector = Collector<EncodedFrame>()
            var configuration = EncoderConfiguration.liveCapture
            configuration.averageBitRate = 400_000
            let session = try EncoderSession(width: Self.width, height: Self.height, configuration: configuration,
                                             outputHandler: { collector.append($0) })
            // Encoders take a time stamp and encode under one lock, so stamps increase in call
            // order whichever thread calls; the rest run free.
            struct Book {
                var next = 0
                var accepted: [(pts: Duration, forced: Bool)] = []
                var unexpected: [MediaError] = []
            }
            let book = Locked(Book())
            let total = 40
            DispatchQueue.concurrentPerform(iterations: 6) { worker in
                switch worker {
                case 0, 1, 2:
                    while true {
                        let done: Bool = book.withLock { b in
                            guard b.next < total else { return true }
                            let index = b.next
                            b.next += 1
                            let forced = index % 7 == worker
                            do throws(MediaError) {
                                try session.encode(Self.frame(index), presentationTimeStamp: Self.pts(index), forceKeyframe: forced)
                                b.accepted.append((Self.pts(index), forced))
                            } catch where error.code == .invalidState {
                                // invalidated meanwhile: allowed
                            } catch {
                                b.unexpected.append(error)
                            }
                            return false
                        }
                        if done { break }
                    }
                case 3:
                    for i in 0..<20 {
                        do throws(MediaError) {
                            try session.setAverageBitRate(300_000 + 10_000 * i)
                        } catch where error.code == .invalidState {
                        } catch {
                            book.withLock { $0.unexpected.append(error) }
                        }
                    }
                case 4:
                    do throws(MediaError) { try session.completeFrames() } catch where error.code == .invalidState {} catch {
                        book.withLock { $0.unexpected.append(error) }
                    }
                default:
                    // Invalidate part way in rounds 1 and 2, at the end in round 0.
                    if round > 0 {
                        while book.withLock({ $0.next < total / (round + 1) }) { sched_yield() }
                        session.invalidate()
                        session.invalidate()
                    }
                }
            }
            if round == 0 { try session.completeFrames() }
            session.invalidate()
            let (accepted, unexpected) = book.withLock { ($0.accepted, $0.unexpected) }
            #expect(unexpected.isEmpty, "\(unexpected)")
            #expect(session.state == .invalidated)
            let frames = collector.all
            let acceptedPTS = accepted.map(\.pts)
            #expect(frames.count <= accepted.count)
            if round == 0 { #expect(frames.count == total && accepted.count == total) }
            // Output comes in order, and only frames that were accepted.
            #expect(frames.map(\.presentationTimeStamp) == Array(acceptedPTS.prefix(frames.count)))
            for frame in frames {
                if let entry = accepted.first(where: { $0.pts == frame.presentationTimeStamp }), entry.forced {
                    #expect(frame.isKeyframe, "a forced keyframe at \(frame.presentationTimeStamp)")
                }
            }
            #expect((#expect(throws: MediaError.self) { try session.encode(Self.frame(0), presentationTimeStamp: .seconds(99)) })?.code == .invalidState)
        }
    }

    @Test func lastReferenceDroppedWithFramesInFlight() throws {
        for _ in 0..<5 {
            let collector = Collector<EncodedFrame>()
            weak var weakSession: EncoderSession?
            do {
                let session = try EncoderSession(width: Self.width, height: Self.height, configuration: .liveCapture,
                                                 outputHandler: { collector.append($0) })
                weakSession = session
                for i in 0..<15 { try session.encode(Self.frame(i), presentationTimeStamp: Self.pts(i)) }
                // No completeFrames, no invalidate: the session goes away with frames queued.
            }
            #expect(weakSession == nil, "the queued work does not keep the session alive")
            let frames = collector.all
            #expect(frames.count <= 15)
            #expect(frames.map(\.presentationTimeStamp) == (0..<frames.count).map(Self.pts))
        }
    }
}
