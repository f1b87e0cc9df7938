import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing
import RTP

/// Idle timeouts run on the event loop's clock: on an `EmbeddedChannel` the test moves time,
/// so a 10-second timeout is checked to the millisecond without waiting for it.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct IdleTimerTests {
    @Test func theTimerFiresOnlyAfterTheTimeoutWithoutNews() {
        let loop = EmbeddedEventLoop()
        var fired = 0
        let timer = IdleTimer(timeout: .seconds(10), loop: loop) { fired += 1 }
        #expect(IdleTimer(timeout: nil, loop: loop) {} == nil, "no timeout, no timer")
        timer?.start()
        loop.advanceTime(by: .seconds(9))
        timer?.heard()
        loop.advanceTime(by: .seconds(9))
        #expect(fired == 0, "heard 9 s ago")
        loop.advanceTime(by: .milliseconds(999))
        #expect(fired == 0)
        loop.advanceTime(by: .milliseconds(1))
        #expect(fired == 1, "10 s without news")
        loop.advanceTime(by: .seconds(60))
        #expect(fired == 1, "once")
        timer?.start()
        timer?.cancel()
        loop.advanceTime(by: .seconds(60))
        #expect(fired == 1, "cancelled")
    }

    /// The plain RTP receiver's socket handler ends its sequence with `.idle` once no datagram
    /// has come for its idle timeout, counted from the last one.
    @Test func theRTPReceiverEndsWhenIdle() throws {
        let queue = FrameEventQueue<RTPReceiver.Element, RTPReceiver.Ending>(limit: 16, keyframeFlag: \.keyframeFlag)
        let state = Locked(RTPReceptionStatistics(packets: 0, lostPackets: 0, droppedAccessUnits: 0))
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            RTPReceiverHandler(depacketizer: VideoRTPDepacketizer(h264: RTPDepacketizer()), queue: queue, state: state, idleTimeout: .seconds(2)))
        channel.pipeline.fireChannelActive()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1500))
        let sender = try SocketAddress(ipAddress: "127.0.0.1", port: 5004)
        let packet = ByteBuffer(bytes: [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x09, 0xF0])
        try channel.writeInbound(AddressedEnvelope(remoteAddress: sender, data: packet))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1999))
        #expect(queue.ending == nil, "a packet came 1.999 s ago")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(queue.ending == .idle)
        #expect(state.withLock { $0.packets } == 1)
        _ = try? channel.finish()
    }

    /// What holds a timer whose `onIdle` captures it, as a connection handler does.
    final class Owner {
        var timer: IdleTimer?
    }

    /// `onIdle` usually captures the timer's owner: cancelling lets go of it, so the two do not
    /// keep each other alive (they did, and every connection a reconnecting client lost stayed
    /// in memory).
    @Test func cancellingLetsGoOfTheOwner() {
        let loop = EmbeddedEventLoop()
        weak var released: Owner?
        do {
            let owner = Owner()
            owner.timer = IdleTimer(timeout: .seconds(1), loop: loop) { [owner] in _ = owner }
            owner.timer?.start()
            owner.timer?.cancel()
            released = owner
        }
        #expect(released == nil, "the cancelled timer still holds its owner")
        weak var fired: Owner?
        do {
            let owner = Owner()
            owner.timer = IdleTimer(timeout: .seconds(1), loop: loop) { [owner] in owner.timer?.cancel() }
            owner.timer?.start()
            fired = owner
        }
        loop.advanceTime(by: .seconds(2))
        #expect(fired == nil, "an owner that cancels when the timer fires is let go")
    }

    /// An `RTSPClientHandler` with an idle timeout that played and ended (the server closed the
    /// connection) is freed once its channel is gone: what a reconnecting client leaves behind
    /// at each disconnection.
    @Test func anEndedClientHandlerIsFreed() throws {
        weak var released: RTSPClientHandler?
        try {
            let continuation = FrameEventQueue<RTSPClient.Event, Never>(limit: 16, keyframeFlag: \.keyframeFlag)
            let handler = RTSPClientHandler(continuation: continuation, state: Locked(RTSPClient.State()), idleTimeout: .seconds(10),
                                            userAgent: "test", credentials: nil, logger: .streamingSilent) { _ in }
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 554)).wait()
            handler.play(with: VideoRTPDepacketizer(h264: RTPDepacketizer()))
            handler.startKeepAlive(every: .seconds(30), method: "OPTIONS", uri: "rtsp://127.0.0.1/live", session: "1", timeout: .seconds(10))
            handler.startReceiverReports(every: .seconds(5))
            released = handler
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
            _ = try? channel.finish()
            #expect(handler.ending == .serverClosed)
        }()
        #expect(released == nil, "the ended handler is still in memory")
    }
}
