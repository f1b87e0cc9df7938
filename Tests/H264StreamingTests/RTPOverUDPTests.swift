import H264
import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTP

/// Plain RTP over UDP on loopback: the sender's SDP, read by the receiver, bound on port 0
/// (the port read from the receiver), and the access units sent arriving as they were.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTPOverUDPTests {
    @Test func whatTheSenderSendsTheReceiverDelivers() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (format, frames) = StreamingFixtures.stream
        let described = SessionDescription(formatDescription: format, address: "127.0.0.1", port: 0)
        let receiver = try await RTPReceiver.start(description: described, host: "127.0.0.1", port: 0, group: group)
        let port = try #require(receiver.localAddress?.port)
        let sender = try await RTPSender.start(host: "127.0.0.1", port: port, group: group)
        let sdp = sender.sessionDescription(format: format)
        #expect(sdp.port == port)
        #expect(try sdp.formatDescription() == format)

        let sent = Array(frames.drop { !$0.isKeyframe }.prefix(8))
        for (index, frame) in sent.enumerated() { try sender.send(frame, presentationTime: .milliseconds(40 * index)) }
        var received: [RTPReceivedFrame] = []
        for await event in receiver {
            if case .frame(let unit) = event { received.append(unit) }
            // The last access unit completes with the next packet or the end: stop before it.
            if received.count == sent.count - 1 { break }
        }
        await receiver.shutdown()
        #expect(receiver.ending == .stopped)
        #expect(received.map(\.frame.isKeyframe) == sent.dropLast().map(\.isKeyframe))
        for (unit, frame) in zip(received, sent) where !frame.isKeyframe { #expect(unit.frame.data == frame.avcc) }
        #expect(receiver.statistics.lostPackets == 0)
        #expect(sender.statistics.failed == 0)
        await sender.shutdown()
        try await group.shutdownGracefully()
    }

    /// No packet for the idle timeout ends the sequence, and says so.
    @Test func silenceEndsTheReceiverAtItsIdleTimeout() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let described = SessionDescription(formatDescription: StreamingFixtures.format, address: "127.0.0.1", port: 0)
        let receiver = try await RTPReceiver.start(description: described, host: "127.0.0.1", port: 0, group: group,
                                                   idleTimeout: .milliseconds(50))
        var events = 0
        for await _ in receiver { events += 1 }
        #expect(events == 0 && receiver.ending == .idle)
        await receiver.shutdown()
        try await group.shutdownGracefully()
    }
}
