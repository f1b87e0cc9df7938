import H264
import H264SessionCore
import H264TestSupport
import Testing

/// `OutputSink`: the one buffering policy of both sessions' `frames`, the one rule for output
/// after invalidate, and the error slot.
@Suite(.ownThread) struct OutputSinkTests {
    /// A consumer that never reads: the sequence holds `limit` outputs, never more; every other
    /// is dropped and counted; the handler sees all of them. Which ones are kept follows the
    /// policy.
    @Test(arguments: [OutputBufferingPolicy.keepingNewest(4), .keepingOldest(4)])
    func anUnreadSequenceIsBounded(policy: OutputBufferingPolicy) async {
        let handled = Locked(0)
        let sink = OutputSink<Int>(handler: { _ in handled.withLock { $0 += 1 } }, failureCode: .unsupported)
        let stream = sink.frames(policy)
        for i in 0..<1_000 { sink.deliver(i) }
        #expect(sink.droppedCount == 996)
        #expect(handled.withLock { $0 } == 1_000)
        sink.invalidate()
        var kept: [Int] = []
        for await value in stream { kept.append(value) }
        switch policy {
        case .keepingNewest: #expect(kept == [996, 997, 998, 999])
        case .keepingOldest: #expect(kept == [0, 1, 2, 3])
        case .waitingForConsumer: Issue.record("not an argument of this test")
        }
    }

    /// A consumer that keeps up loses nothing.
    @Test func aReadingConsumerLosesNothing() async {
        let sink = OutputSink<Int>(handler: nil, failureCode: .unsupported)
        let stream = sink.frames(.keepingNewest(2))
        var iterator = stream.makeAsyncIterator()
        var read: [Int] = []
        for i in 0..<100 {
            sink.deliver(i)
            if let value = await iterator.next() { read.append(value) }
        }
        #expect(read == Array(0..<100))
        #expect(sink.droppedCount == 0)
    }

    @Test func framesIsMadeOnce() {
        let sink = OutputSink<Int>(handler: nil, failureCode: .unsupported)
        let first = sink.frames(.keepingNewest(1))
        sink.deliver(1)
        sink.deliver(2)
        _ = sink.frames(.keepingOldest(10))   // the same sequence: the first policy stays
        sink.deliver(3)
        #expect(sink.droppedCount == 2)
        _ = first
    }

    /// After invalidate nothing is delivered: not to the handler, not to `frames`, which
    /// finishes (at once when first made after invalidate).
    @Test func noOutputAfterInvalidate() async {
        let handled = Locked<[Int]>([])
        let sink = OutputSink<Int>(handler: { v in handled.withLock { $0.append(v) } }, failureCode: .unsupported)
        let stream = sink.frames(.default)
        sink.deliver(1)
        sink.invalidate()
        sink.deliver(2)
        #expect(sink.isInvalidated)
        #expect(handled.withLock { $0 } == [1])
        var values: [Int] = []
        for await v in stream { values.append(v) }
        #expect(values == [1])

        let late = OutputSink<Int>(handler: nil, failureCode: .unsupported)
        late.invalidate()
        late.deliver(1)
        var count = 0
        for await _ in late.frames(.default) { count += 1 }
        #expect(count == 0)
    }

    /// Invalidate from many tasks while outputs are delivered from others: idempotent, the
    /// sequence finishes once, nothing is delivered once the first invalidate returned.
    @Test func invalidateFromManyTasksWhileDelivering() async {
        let afterInvalidate = Locked(false)
        let late = Locked(0)
        let sink = OutputSink<Int>(handler: { _ in if afterInvalidate.withLock({ $0 }) { late.withLock { $0 += 1 } } },
                                   failureCode: .unsupported)
        let stream = sink.frames(.keepingNewest(8))
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<100 {
                group.addTask {
                    if i == 50 {
                        sink.invalidate()
                        afterInvalidate.withLock { $0 = true }
                    } else if i % 3 == 0 {
                        sink.invalidate()
                    } else {
                        sink.deliver(i)
                    }
                }
            }
        }
        #expect(sink.isInvalidated)
        let before = late.withLock { $0 }
        for i in 0..<10 { sink.deliver(i) }
        #expect(late.withLock { $0 } == before)   // none after the invalidate calls all returned
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count <= 8)
    }

    @Test func theFirstErrorIsThrownOnce() {
        struct Other: Error {}
        let sink = OutputSink<Int>(handler: nil, failureCode: .unsupported)
        #expect(sink.takeError() == nil)
        sink.record(Other())
        sink.record(MediaError(.truncated))
        #expect(sink.takeError()?.code == .unsupported)
        #expect(sink.takeError() == nil)
        sink.record(MediaError(.truncated))
        #expect(sink.takeError()?.code == .truncated)
    }

    @Test(arguments: [(OutputBufferingPolicy.keepingNewest(0), false), (.keepingOldest(-1), false),
                      (.keepingNewest(1), true), (.keepingOldest(100_000), true), (.keepingNewest(100_001), false)])
    func policyLimits(policy: OutputBufferingPolicy, valid: Bool) {
        do throws(MediaError) {
            try policy.validate()
            #expect(valid)
        } catch {
            #expect(!valid)
            #expect(error.code == .invalidConfiguration && error.field == "frameBuffering")
        }
    }
}
