import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing
import RTP
import RTSPMessages

/// RTP timestamps from the media clock: frames with presentation times keep their spacing
/// however they reach the connection (`RTSPPlayClock`, and a playing connection on
/// `EmbeddedChannel`).
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPPlayClockTests {
    /// 30 frames a second: frame `index`'s presentation time.
    static func pts(_ index: Int) -> Duration { .seconds(1) / 30 * index }

    /// Frames with presentation times arriving at one instant are stamped from the first one's
    /// arrival plus their presentation-time differences; sender reports go on from the last.
    @Test func presentationTimesSetTheStamps() {
        let start = ContinuousClock.now
        var clock = RTSPPlayClock(playStart: start)
        let arrival = start + .milliseconds(40)
        let stamps = (10..<14).map { clock.stamp(presentationTime: Self.pts($0), arrival: arrival) }
        #expect(stamps == (0..<4).map { .milliseconds(40) + Self.pts($0) })
        #expect(clock.time(at: arrival + .milliseconds(5)) == stamps.last! + .milliseconds(5))
    }

    /// Frames without presentation times: their arrival since PLAY, one tick apart at least.
    @Test func framesWithoutPresentationTimesUseTheirArrival() {
        let start = ContinuousClock.now
        var clock = RTSPPlayClock(playStart: start)
        #expect(clock.time(at: start + .seconds(1)) == .seconds(1))
        let first = clock.stamp(presentationTime: nil, arrival: start + .milliseconds(10))
        let second = clock.stamp(presentationTime: nil, arrival: start + .milliseconds(10))
        #expect(first == .milliseconds(10) && second == first + RTSPPlayClock.tick)
    }

    /// A burst of frames (pts 0, 33.3, 66.7 ms, …) written to a playing connection at once: the
    /// RTP timestamps of its access units step by 3000 (90 kHz), RTP-Info's `rtptime` first.
    @Test func aBurstOfFramesStepsBy3000() throws {
        let mounts = RTSPMounts()
        let broadcaster = Broadcaster(queueLimit: 30)
        mounts.set("/live", RTSPMounts.Mount(broadcaster: broadcaster, format: .h264(StreamingFixtures.format)))
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            RTSPConnectionHandler(mounts: mounts, configuration: .init(), logger: .streamingSilent))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 554)).wait()
        var reader = RTSPMessageReader()
        func response(to request: String) throws -> RTSPResponse {
            try channel.writeInbound(ByteBuffer(string: request))
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                reader.append(buffer.readableBytesView)
                if case .response(let response) = try reader.next() { return response }
            }
            throw ChannelError.eof
        }
        let setup = try response(to: "SETUP rtsp://127.0.0.1/live/track1 RTSP/1.0\r\nCSeq: 1\r\n"
                                     + "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n")
        let session = try #require(setup.headers.first { $0.name == "Session" }?.value.split(separator: ";").first)
        let play = try response(to: "PLAY rtsp://127.0.0.1/live RTSP/1.0\r\nCSeq: 2\r\nSession: \(session)\r\n\r\n")
        let rtpInfo = try #require(play.headers.first { $0.name == "RTP-Info" }?.value)
        let rtpTime = try #require(rtpInfo.split(separator: "rtptime=").last.flatMap { UInt32($0) })

        var frames = StreamingFixtures.stream.frames.prefix(6).enumerated().map { index, frame in
            var frame = frame
            frame.presentationTime = Self.pts(index)
            return frame
        }
        frames[0].isKeyframe = true
        for frame in frames { channel.write(BroadcastWrite.frame(frame), promise: nil) }
        channel.flush()
        var timestamps: [UInt32] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            reader.append(buffer.readableBytesView)
            while let message = try reader.next() {
                guard case .interleavedFrame(0, let packet) = message else { continue }
                let header = try RTPHeader.parse(packet).header
                if header.timestamp != timestamps.last { timestamps.append(header.timestamp) }
            }
        }
        #expect(timestamps.count == frames.count)
        #expect(zip(timestamps.dropFirst(), timestamps).allSatisfy { $0 &- $1 == 3000 }, "\(timestamps)")
        #expect(timestamps.first! &- rtpTime < 90_000, "the first frame is stamped with its arrival since PLAY")
        _ = try? channel.finish()
    }
}
