import H264
@testable import H264Streaming
import H264TestSupport
import MediaCore
import NIOCore
import Testing

/// Sinks of the fan-out: a program's own output attached to a ``Broadcaster`` gets every frame
/// from the first keyframe on, is cut back to the next keyframe when it falls behind (never a
/// broken GOP), starts with a relay's kept GOP, and ends alone when it throws.
@Suite(.timeLimit(.minutes(1))) struct LiveSinkTests {
    /// A frame tagged `tag` (its one NAL unit's byte).
    static func frame(_ tag: UInt8, isKeyframe: Bool) -> LiveFrame {
        BroadcasterTests.frame(tag, isKeyframe: isKeyframe)
    }

    /// The tag of a frame made by ``frame(_:isKeyframe:)``.
    static func tag(_ frame: CompressedFrame) -> UInt8 { frame.data.last ?? 0 }

    /// A sink of the test's own: collects the tags of what it reads; throws at `failingAt`.
    final class CollectingSink: LiveSink {
        let tags = Locked<[UInt8]>([])
        let failingAt: UInt8?
        struct Failure: Error {}

        init(failingAt: UInt8? = nil) { self.failingAt = failingAt }

        func consume(_ frames: LiveFrameStream) async throws {
            for await frame in frames {
                let tag = LiveSinkTests.tag(frame)
                if tag == failingAt { throw Failure() }
                tags.withLock { $0.append(tag) }
            }
        }
    }

    /// The must-show: a custom sink receives every frame from the first keyframe on, in order,
    /// and asked the encoder for that keyframe when it attached.
    @Test func aCustomSinkGetsEveryFrameFromTheFirstKeyframe() async throws {
        let requests = BroadcasterTests.KeyframeRequests()
        let broadcaster = BroadcasterTests.broadcaster(requests: requests)
        let sink = CollectingSink()
        let task = broadcaster.attach(sink)
        #expect(requests.value == 1 && broadcaster.keyframeWanted)
        for (tag, isKeyframe) in [(1, false), (2, true), (3, false), (4, false), (5, true), (6, false)] {
            broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: isKeyframe))
        }
        #expect(!broadcaster.keyframeWanted, "the IDR served the sink")
        await broadcaster.closeAll(flushing: true)
        let outcome = try await task.value
        #expect(sink.tags.withLock { $0 } == [2, 3, 4, 5, 6])
        #expect(outcome == LiveSinkOutcome(skippedFrames: 1, skips: 0))
        #expect(broadcaster.clientCount == 0)
    }

    /// A reader that falls `frameLimit` frames behind loses the queued frames and the ones up to
    /// the next keyframe, counted; it never gets a frame of the broken GOP.
    @Test func aSlowReaderIsCutBackToTheNextKeyframe() async throws {
        let broadcaster = BroadcasterTests.broadcaster()
        let frames = broadcaster.frames(limits: LiveSinkLimits(byteLimit: 1 << 20, frameLimit: 3))
        for (tag, isKeyframe) in [(1, true), (2, false), (3, false), (4, false), (5, false), (6, true), (7, false)] {
            broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: isKeyframe))
        }
        await broadcaster.closeAll(flushing: true)
        var tags: [UInt8] = []
        for await frame in frames { tags.append(Self.tag(frame)) }
        #expect(tags == [6, 7])
        #expect(frames.skippedFrames == 5 && frames.skips == 1)
        #expect(broadcaster.clientCount == 0, "a reader that read to the end is forgotten")
    }

    /// The byte limit cuts back the same way: frames of 5 bytes against a 12-byte limit.
    @Test func theByteLimitBoundsTheQueue() async throws {
        let broadcaster = BroadcasterTests.broadcaster()
        let frames = broadcaster.frames(limits: LiveSinkLimits(byteLimit: 12, frameLimit: 100))
        for (tag, isKeyframe) in [(1, true), (2, false), (3, false), (4, true)] {
            broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: isKeyframe))
        }
        await broadcaster.closeAll(flushing: true)
        var tags: [UInt8] = []
        for await frame in frames { tags.append(Self.tag(frame)) }
        #expect(tags == [4])
        #expect(frames.skippedFrames == 3 && frames.skips == 1)
    }

    /// A relay's sink attached mid-GOP starts with the kept frames, without asking for an IDR.
    @Test func aSinkStartsWithTheKeptGOP() async throws {
        let requests = BroadcasterTests.KeyframeRequests()
        let broadcaster = Broadcaster(queueLimit: 16, keepingGOP: .standard, onKeyframeRequest: { requests.count() })
        for (tag, isKeyframe) in [(1, false), (2, true), (3, false)] {
            broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: isKeyframe))
        }
        let sink = CollectingSink()
        let task = broadcaster.attach(sink)
        broadcaster.broadcast(Self.frame(4, isKeyframe: false))
        await broadcaster.closeAll(flushing: true)
        _ = try await task.value
        #expect(sink.tags.withLock { $0 } == [2, 3, 4])
        #expect(requests.value == 0 && broadcaster.statistics.startsFromKeptGOP == 1)
    }

    /// A sink that throws ends alone: its error comes out of its task, and another sink gets
    /// every frame.
    @Test func aFailingSinkEndsAlone() async throws {
        let broadcaster = BroadcasterTests.broadcaster()
        let failing = CollectingSink(failingAt: 2), healthy = CollectingSink()
        let failingTask = broadcaster.attach(failing), healthyTask = broadcaster.attach(healthy)
        for tag in 1...4 { broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: tag == 1)) }
        await #expect(throws: CollectingSink.Failure.self) { try await failingTask.value }
        #expect(broadcaster.clientCount == 1, "the failed sink detached")
        await broadcaster.closeAll(flushing: true)
        _ = try await healthyTask.value
        #expect(failing.tags.withLock { $0 } == [1])
        #expect(healthy.tags.withLock { $0 } == [1, 2, 3, 4])
    }

    /// Cancelling a sink's task detaches it at once, its queue dropped.
    @Test func cancellingASinkDetachesIt() async throws {
        let broadcaster = BroadcasterTests.broadcaster()
        let task = broadcaster.attach(CollectingSink())
        #expect(broadcaster.clientCount == 1)
        task.cancel()
        _ = try? await task.value
        #expect(broadcaster.clientCount == 0)
    }
}
