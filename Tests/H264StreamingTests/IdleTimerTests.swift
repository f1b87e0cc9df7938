import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import Testing

/// Idle timeouts run on the event loop's clock: on an `EmbeddedChannel` the test moves time,
/// so a 10-second timeout is checked to the millisecond without waiting for it.
@Suite struct IdleTimerTests {
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
        let continuation = AsyncStream.makeStream(of: RTPReceiver.Element.self).continuation
        let state = Locked<(ending: RTPReceiver.Ending?, statistics: RTPReceptionStatistics)>((nil, .init(packets: 0, lostPackets: 0, droppedAccessUnits: 0)))
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            RTPReceiverHandler(depacketizer: RTPDepacketizer(), continuation: continuation, state: state, idleTimeout: .seconds(2)))
        channel.pipeline.fireChannelActive()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1500))
        let sender = try SocketAddress(ipAddress: "127.0.0.1", port: 5004)
        let packet = ByteBuffer(bytes: [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x09, 0xF0])
        try channel.writeInbound(AddressedEnvelope(remoteAddress: sender, data: packet))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1999))
        #expect(state.withLock { $0.ending } == nil, "a packet came 1.999 s ago")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(state.withLock { $0.ending } == .idle)
        #expect(state.withLock { $0.statistics.packets } == 1)
        _ = try? channel.finish()
    }
}
