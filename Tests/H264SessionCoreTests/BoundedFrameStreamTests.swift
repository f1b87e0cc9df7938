import Dispatch
import H264
import H264TestSupport
import Testing

/// A compressed frame as the stream sees it: its index in the stream and whether a decoder can
/// start from it.
private struct Frame: Sendable, Equatable {
    var index: Int
    var isKeyframe: Bool
}

/// `BoundedFrameStream`: bounded, and a drop of compressed frames always runs up to a keyframe.
@Suite(.ownThread) struct BoundedFrameStreamTests {
    /// Frames 0..<count with a keyframe every `gop` frames.
    private static func frames(_ count: Int, gop: Int) -> [Frame] {
        (0..<count).map { Frame(index: $0, isKeyframe: $0 % gop == 0) }
    }

    private static func make(_ policy: OutputBufferingPolicy, compressed: Bool = true)
        -> (stream: BoundedFrameStream<Frame>, producer: BoundedFrameStream<Frame>.Producer) {
        var isKeyframe: (@Sendable (Frame) -> Bool)?
        if compressed { isKeyframe = { @Sendable frame in frame.isKeyframe } }
        return BoundedFrameStream<Frame>.make(policy: policy, isKeyframe: isKeyframe)
    }

    private static func drain(_ stream: BoundedFrameStream<Frame>) async -> [Int] {
        var read: [Int] = []
        for await frame in stream { read.append(frame.index) }
        return read
    }

    /// An unread stream of 12 frames, capacity 4: which frames it keeps and how many it drops,
    /// per policy and group-of-pictures length (worked out by hand from the documented rule).
    @Test(arguments: [
        (OutputBufferingPolicy.keepingOldest(4), 4, [0, 1, 2, 3], 8),
        (.keepingNewest(4), 4, [8, 9, 10, 11], 8),
        // GOP of 6: keepingOldest keeps the first 4; the keyframe 6 finds no room and is dropped too.
        (.keepingOldest(4), 6, [0, 1, 2, 3], 8),
        // GOP of 6, newest: frame 4 empties the ring (the whole first group goes) and is dropped
        // with 5; 6…9 are held; 10 drops that group, and 10, 11 follow nothing: dropped.
        (.keepingNewest(4), 6, [], 12),
        // One group longer than the stream: the first 4 and nothing after them.
        (.keepingOldest(4), 100, [0, 1, 2, 3], 8),
    ])
    func anUnreadStreamKeepsWholeGroups(policy: OutputBufferingPolicy, gop: Int, kept: [Int], dropped: Int) async {
        let (stream, producer) = Self.make(policy)
        var droppedByYield = 0
        for frame in Self.frames(12, gop: gop) { droppedByYield += producer.yield(frame) }
        #expect(stream.waitingCount <= 4)
        producer.finish()
        #expect(await Self.drain(stream) == kept)
        #expect(stream.droppedFrameCount == dropped)
        #expect(droppedByYield == dropped)
    }

    /// Decoded frames stand alone: a drop is one frame, as `AsyncStream` drops.
    @Test(arguments: [(OutputBufferingPolicy.keepingOldest(4), [0, 1, 2, 3]), (.keepingNewest(4), [8, 9, 10, 11])])
    func aStreamWithoutKeyframesDropsOneFrameAtATime(policy: OutputBufferingPolicy, kept: [Int]) async {
        let (stream, producer) = Self.make(policy, compressed: false)
        for frame in Self.frames(12, gop: 1_000) { producer.yield(frame) }
        producer.finish()
        #expect(await Self.drain(stream) == kept)
        #expect(stream.droppedFrameCount == 8)
    }

    /// 200 seeded random runs, each a stream of random groups of pictures read at random moments
    /// under a random drop policy and capacity: the consumer never reads a frame that does not
    /// follow the one it read before unless it is a keyframe, the first frame read is a
    /// keyframe, nothing waits beyond the capacity, and every frame is read or counted dropped.
    @Test func aConsumerNeverReadsABrokenGroupOfPictures() async {
        var random = SplitMix64(seed: 34)
        for _ in 0..<200 {
            let capacity = Int.random(in: 1...6, using: &random)
            let policy: OutputBufferingPolicy = Bool.random(using: &random) ? .keepingNewest(capacity) : .keepingOldest(capacity)
            let (stream, producer) = Self.make(policy)
            var iterator = stream.makeAsyncIterator()
            var frames: [Frame] = []
            for index in 0..<200 {
                frames.append(Frame(index: index, isKeyframe: index == 0 || Int.random(in: 0..<8, using: &random) == 0))
            }
            var read: [Frame] = []
            for frame in frames {
                producer.yield(frame)
                #expect(stream.waitingCount <= capacity)
                while stream.waitingCount > 0 && Int.random(in: 0..<3, using: &random) == 0 {
                    if let next = await iterator.next() { read.append(next) }
                }
            }
            producer.finish()
            while let next = await iterator.next() { read.append(next) }
            #expect(read.first?.isKeyframe ?? true)
            let broken = zip(read, read.dropFirst()).filter { previous, next in next.index != previous.index + 1 && !next.isKeyframe }
            #expect(broken.isEmpty, "\(policy): \(broken.map { ($0.0.index, $0.1.index) })")
            #expect(read.count + stream.droppedFrameCount == frames.count)
        }
    }

    /// `waitingForConsumer`: the producer (a thread) waits for room instead of dropping: all 100
    /// frames arrive in order through a capacity of 2, none dropped, and while the consumer
    /// does not read, the producer is held with exactly 2 frames waiting.
    @Test(.timeLimit(.minutes(1)))
    func waitingForConsumerHoldsTheProducer() async {
        let (stream, producer) = Self.make(.waitingForConsumer(2))
        let yielded = Locked(0)
        let thirdStarted = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for frame in Self.frames(100, gop: 10) {
                if frame.index == 2 { thirdStarted.signal() }
                producer.yield(frame)
                yielded.withLock { $0 += 1 }
            }
            producer.finish()
        }
        thirdStarted.wait()
        // Frame 2 cannot go in before a read: two frames yielded, two waiting.
        #expect(yielded.withLock { $0 } == 2)
        #expect(stream.waitingCount == 2)
        #expect(await Self.drain(stream) == Array(0..<100))
        #expect(stream.droppedFrameCount == 0)
    }

    /// A consumer whose task is cancelled ends the stream: its `next()` returns nil, and a
    /// producer waiting for room is released (its later frames go nowhere).
    @Test(.timeLimit(.minutes(1)))
    func cancellingTheConsumerReleasesTheProducer() async {
        let (stream, producer) = Self.make(.waitingForConsumer(1))
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            _ = await iterator.next()                   // frame 0
            withUnsafeCurrentTask { $0?.cancel() }
            return await iterator.next()                // cancelled: nil
        }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for frame in Self.frames(10, gop: 5) { producer.yield(frame) }
            done.signal()
        }
        #expect(await consumer.value == nil)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(stream.waitingCount == 0)
    }

    /// The producer finishes: waiting frames are still read, then iteration ends; a consumer
    /// suspended on an empty stream is resumed with nil.
    @Test(.timeLimit(.minutes(1)))
    func finishEndsIterationAfterTheWaitingFrames() async {
        let (stream, producer) = Self.make(.keepingNewest(4))
        producer.yield(Frame(index: 0, isKeyframe: true))
        producer.finish()
        producer.yield(Frame(index: 1, isKeyframe: false))
        #expect(await Self.drain(stream) == [0])

        let (empty, emptyProducer) = Self.make(.keepingNewest(4))
        let waiting = Task { await Self.drain(empty) }
        emptyProducer.finish()
        #expect(await waiting.value == [])
    }
}

