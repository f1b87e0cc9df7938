import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing

/// The live stream's broadcaster on NIO's `EmbeddedChannel`: viewers joining, one IDR shared by
/// those waiting together, and a viewer that cannot keep up skipped to the next IDR, each step
/// checked on the bytes a viewer's channel was given.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct BroadcasterTests {
    /// A viewer: an embedded channel with the serve client handler, connected (so the
    /// broadcaster has registered it), and optionally a handler that holds its writes as a full
    /// kernel send buffer would.
    final class Viewer {
        let channel: EmbeddedChannel
        let held: HeldWrites?

        init(_ broadcaster: Broadcaster, holdingWrites: Bool = false) throws {
            held = holdingWrites ? HeldWrites() : nil
            channel = EmbeddedChannel()
            if let held { try channel.pipeline.syncOperations.addHandler(held) }
            try channel.pipeline.syncOperations.addHandler(AnnexBFanOutHandler(broadcaster: broadcaster))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5000)).wait()
        }

        /// The frames written to the socket so far, each as its first byte (the tests' frame tag).
        func received() throws -> [UInt8] {
            channel.embeddedEventLoop.run() // a join from the kept GOP is written in a turn of its own
            var tags: [UInt8] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                if let tag = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) { tags.append(tag) }
            }
            return tags
        }
    }

    /// Holds every write and its promise until ``release()``: a socket whose kernel buffer is full.
    final class HeldWrites: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        private var writes: [(NIOAny, EventLoopPromise<Void>?)] = []
        private var context: ChannelHandlerContext?

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            writes.append((data, promise))
        }

        func flush(context: ChannelHandlerContext) {}

        var count: Int { writes.count }

        /// Lets every held write through to the socket (their promises complete).
        func release() {
            guard let context else { return }
            let pending = writes
            writes = []
            for (data, promise) in pending { context.write(data, promise: promise) }
            context.flush()
        }
    }

    /// A frame whose Annex-B bytes start with `tag` (raw viewers get the producer's bytes as they are).
    static func frame(_ tag: UInt8, isKeyframe: Bool) -> LiveFrame {
        LiveFrame(avcc: [0, 0, 0, 1, tag], formatDescription: StreamingFixtures.format, isKeyframe: isKeyframe,
                  annexB: ByteBuffer(bytes: [tag, 0, 0, 1]))
    }

    static func broadcaster(queueLimit: Int = 8, requests: KeyframeRequests? = nil) -> Broadcaster {
        Broadcaster(queueLimit: queueLimit, onKeyframeRequest: { requests?.count() })
    }

    final class KeyframeRequests: Sendable {
        private let calls = Locked(0)
        func count() { calls.withLock { $0 += 1 } }
        var value: Int { calls.withLock { $0 } }
    }


    /// A joining viewer asks for an IDR (the pacer is told), gets nothing until one comes, then
    /// every frame from it on; the request is settled by that IDR.
    @Test func aJoiningViewerStartsAtTheNextIDR() throws {
        let requests = KeyframeRequests()
        let broadcaster = Self.broadcaster(requests: requests)
        #expect(!broadcaster.keyframeWanted)
        let viewer = try Viewer(broadcaster)
        #expect(broadcaster.keyframeWanted)
        #expect(requests.value == 1)
        broadcaster.broadcast(Self.frame(1, isKeyframe: false))
        #expect(try viewer.received() == [], "a P frame before the IDR")
        #expect(broadcaster.takeKeyframeRequest())
        #expect(!broadcaster.takeKeyframeRequest(), "one request, taken once")
        broadcaster.broadcast(Self.frame(2, isKeyframe: true))
        broadcaster.broadcast(Self.frame(3, isKeyframe: false))
        broadcaster.broadcast(Self.frame(4, isKeyframe: false))
        #expect(try viewer.received() == [2, 3, 4])
        #expect(!broadcaster.keyframeWanted)
        #expect(broadcaster.statistics.clients == 1)
    }

    /// Viewers joining before the same IDR share it: one request, one IDR, the same bytes
    /// (one buffer, not a copy per viewer); a viewer already streaming asks nothing.
    @Test func viewersJoiningTogetherShareOneIDR() throws {
        let requests = KeyframeRequests()
        let broadcaster = Self.broadcaster(requests: requests)
        let first = try Viewer(broadcaster)
        broadcaster.broadcast(Self.frame(1, isKeyframe: true))
        broadcaster.broadcast(Self.frame(2, isKeyframe: false))
        #expect(!broadcaster.keyframeWanted)
        let joiners = try (0..<3).map { _ in try Viewer(broadcaster) }
        #expect(broadcaster.takeKeyframeRequest(), "the joiners ask")
        #expect(!broadcaster.keyframeWanted, "taken once for all three")
        let idr = Self.frame(3, isKeyframe: true)
        broadcaster.broadcast(idr)
        broadcaster.broadcast(Self.frame(4, isKeyframe: false))
        #expect(try first.received() == [1, 2, 3, 4])
        var storages: Set<UInt> = []
        for joiner in joiners {
            let buffers = try [joiner.channel.readOutbound(as: ByteBuffer.self), joiner.channel.readOutbound(as: ByteBuffer.self)]
            #expect(buffers.map { $0?.getInteger(at: 0, as: UInt8.self) } == [3, 4])
            if let address = buffers[0]?.withUnsafeReadableBytes({ UInt(bitPattern: $0.baseAddress) }) { storages.insert(address) }
        }
        #expect(storages.count == 1, "every joiner was written the same IDR buffer")
        #expect(!broadcaster.keyframeWanted)
        #expect(broadcaster.statistics.clients == 4 && broadcaster.statistics.maxConcurrent == 4)
    }

    /// A viewer whose writes do not complete is skipped once `queueLimit` frames are in flight:
    /// it gets nothing (not even an IDR) until its queue has drained to a quarter, then asks
    /// for an IDR and resumes there. The viewer beside it gets every frame.
    @Test func aSlowViewerIsSkippedToTheNextIDR() throws {
        let broadcaster = Self.broadcaster(queueLimit: 4)
        let slow = try Viewer(broadcaster, holdingWrites: true)
        let fast = try Viewer(broadcaster)
        _ = broadcaster.takeKeyframeRequest()
        broadcaster.broadcast(Self.frame(1, isKeyframe: true))
        for tag in 2...4 { broadcaster.broadcast(Self.frame(UInt8(tag), isKeyframe: false)) }
        #expect(slow.held?.count == 4, "four frames in flight")
        broadcaster.broadcast(Self.frame(5, isKeyframe: false))
        #expect(slow.held?.count == 4, "the fifth is not queued: the viewer is skipped")
        #expect(broadcaster.statistics.overflows == 1)
        broadcaster.broadcast(Self.frame(6, isKeyframe: true))
        #expect(slow.held?.count == 4, "an IDR while still behind is not sent")
        #expect(!broadcaster.keyframeWanted, "and nothing is asked while it is behind")

        slow.held?.release()
        #expect(try slow.received() == [1, 2, 3, 4])
        broadcaster.broadcast(Self.frame(7, isKeyframe: false))
        #expect(broadcaster.keyframeWanted, "drained: it asks for an IDR")
        #expect(slow.held?.count == 0, "and still gets no P frame")
        _ = broadcaster.takeKeyframeRequest()
        broadcaster.broadcast(Self.frame(8, isKeyframe: true))
        broadcaster.broadcast(Self.frame(9, isKeyframe: false))
        slow.held?.release()
        #expect(try slow.received() == [8, 9], "resumed at the IDR")
        #expect(try fast.received() == [1, 2, 3, 4, 5, 6, 7, 8, 9])
    }

    /// A viewer that left is forgotten: nothing more is written to it and the others go on.
    @Test func aViewerThatLeftIsForgotten() throws {
        let broadcaster = Self.broadcaster()
        let leaving = try Viewer(broadcaster)
        let staying = try Viewer(broadcaster)
        broadcaster.broadcast(Self.frame(1, isKeyframe: true))
        try leaving.channel.close().wait()
        broadcaster.broadcast(Self.frame(2, isKeyframe: false))
        #expect(try staying.received() == [1, 2])
        #expect(broadcaster.clientCount == 1, "the viewer that left is forgotten")
        #expect(try leaving.received() == [1])
        #expect(broadcaster.statistics.clients == 2 && broadcaster.statistics.maxConcurrent == 2)
    }
}
