import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing

/// A broadcaster that keeps the current GOP (a relay's): a viewer who joins mid-GOP is written
/// the frames from the last IDR on, then the live ones, in order and without asking for an IDR;
/// a GOP past the limits is not kept, and a viewer who joins then waits for the next IDR.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct KeptGOPTests {
    typealias Viewer = BroadcasterTests.Viewer

    static func frame(_ tag: UInt8, isKeyframe: Bool) -> LiveFrame { BroadcasterTests.frame(tag, isKeyframe: isKeyframe) }

    static func broadcaster(queueLimit: Int = 16, keeping: GOPKeeping, requests: BroadcasterTests.KeyframeRequests) -> Broadcaster {
        Broadcaster(queueLimit: queueLimit, keepingGOP: keeping, onKeyframeRequest: { requests.count() })
    }

    @Test func aViewerJoiningMidGOPStartsAtTheLastIDR() throws {
        let requests = BroadcasterTests.KeyframeRequests()
        let broadcaster = Self.broadcaster(keeping: .standard, requests: requests)
        let early = try Viewer(broadcaster)
        #expect(try early.received() == [], "no GOP kept yet: waits")
        #expect(broadcaster.keyframeWanted && requests.value == 1, "and asks, as without keeping")
        for (tag, isKeyframe) in [(1, false), (2, true), (3, false), (4, false)] {
            broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: isKeyframe))
        }
        let late = try Viewer(broadcaster)
        #expect(try late.received() == [2, 3, 4], "the kept GOP at once")
        #expect(requests.value == 1, "no IDR asked for")
        broadcaster.broadcast(Self.frame(5, isKeyframe: false))
        #expect(try late.received() == [5])
        #expect(try early.received() == [2, 3, 4, 5])
        broadcaster.broadcast(Self.frame(6, isKeyframe: true))
        broadcaster.broadcast(Self.frame(7, isKeyframe: false))
        let third = try Viewer(broadcaster)
        #expect(try third.received() == [6, 7], "the new GOP only")
        #expect(broadcaster.statistics.startsFromKeptGOP == 2)
    }

    /// The live frames written while the kept ones are still queued come after them.
    @Test func liveFramesFollowTheKeptOnesWhileTheyAreHeld() throws {
        let requests = BroadcasterTests.KeyframeRequests()
        let broadcaster = Self.broadcaster(keeping: .standard, requests: requests)
        broadcaster.broadcast(Self.frame(1, isKeyframe: true))
        broadcaster.broadcast(Self.frame(2, isKeyframe: false))
        let viewer = try Viewer(broadcaster, holdingWrites: true)
        broadcaster.broadcast(Self.frame(3, isKeyframe: false)) // before the join's turn: kept, not written
        viewer.channel.embeddedEventLoop.run()
        broadcaster.broadcast(Self.frame(4, isKeyframe: false))
        #expect(viewer.held?.count == 4)
        viewer.held?.release()
        #expect(try viewer.received() == [1, 2, 3, 4])
    }

    /// Past the frame limit, or the byte limit, nothing is kept until the next IDR: a viewer who
    /// joins then asks for an IDR and waits for it.
    @Test(arguments: [GOPKeeping(byteLimit: 1 << 20, frameLimit: 3), GOPKeeping(byteLimit: 3 * 9, frameLimit: 100)])
    func aGOPPastTheLimitIsNotKept(limits: GOPKeeping) throws {
        let requests = BroadcasterTests.KeyframeRequests()
        let broadcaster = Self.broadcaster(keeping: limits, requests: requests)
        // Each test frame is 5 AVCC bytes and 4 Annex-B bytes: three fit in 27 bytes.
        for (tag, isKeyframe) in [(1, true), (2, false), (3, false)] {
            broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: isKeyframe))
        }
        let within = try Viewer(broadcaster)
        #expect(try within.received() == [1, 2, 3], "three frames fit")
        broadcaster.broadcast(Self.frame(4, isKeyframe: false))
        let past = try Viewer(broadcaster)
        #expect(try past.received() == [], "four do not: nothing kept")
        #expect(broadcaster.keyframeWanted && requests.value == 1)
        broadcaster.broadcast(Self.frame(5, isKeyframe: false))
        #expect(try past.received() == [])
        broadcaster.broadcast(Self.frame(6, isKeyframe: true))
        #expect(try past.received() == [6], "the next IDR")
        let next = try Viewer(broadcaster)
        #expect(try next.received() == [6], "kept again from that IDR")
        #expect(try within.received() == [4, 5, 6])
    }

    /// At most `queueLimit − 1` frames are kept, so a viewer handed them is not skipped at once.
    @Test func theQueueLimitBoundsTheKeptFrames() throws {
        let requests = BroadcasterTests.KeyframeRequests()
        let broadcaster = Self.broadcaster(queueLimit: 4, keeping: .standard, requests: requests)
        for tag in 1...3 { broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: tag == 1)) }
        #expect(try Viewer(broadcaster).received() == [1, 2, 3])
        broadcaster.broadcast(Self.frame(4, isKeyframe: false))
        #expect(try Viewer(broadcaster).received() == [])
    }
}
