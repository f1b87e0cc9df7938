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
    /// arrival plus their presentation-time differences; sender reports go on from the first
    /// (the later ones came early).
    @Test func presentationTimesSetTheStamps() {
        let start = ContinuousClock.now
        var clock = RTSPPlayClock(playStart: start)
        let arrival = start + .milliseconds(40)
        let stamps = (10..<14).map { clock.stamp(presentationTime: Self.pts($0), arrival: arrival) }
        #expect(stamps == (0..<4).map { .milliseconds(40) + Self.pts($0) })
        #expect(clock.time(at: arrival + .milliseconds(5)) == stamps.first! + .milliseconds(5))
    }

    /// A B-frame stream arriving in decoding order, stamped in presentation order, a few
    /// milliseconds of jitter on each arrival: sender reports at 5, 10 and 15 s map the same
    /// clock (their RTP times differ by exactly the wall-clock time between them), whichever
    /// frame came last.
    @Test func senderReportsOfABFrameStreamAgree() {
        let start = ContinuousClock.now
        var clock = RTSPPlayClock(playStart: start)
        // Decoding order I P B B, presentation slots 0 3 1 2, … (two frames of delay).
        let slots = (0..<600).map { index in index / 4 * 4 + [0, 3, 1, 2][index % 4] }
        var reports: [Duration] = []
        for (index, slot) in slots.enumerated() {
            let arrival = start + Self.pts(index) + .milliseconds([0, 7, 3, 5, 1][index % 5])
            _ = clock.stamp(presentationTime: Self.pts(slot), arrival: arrival)
            if [149, 299, 449].contains(index) { reports.append(clock.time(at: arrival) - (arrival - start)) }
        }
        #expect(reports.count == 3 && reports.allSatisfy { $0 == reports[0] }, "\(reports)")
    }

    /// A source whose frames fall 300 ms behind for good: after the next full window of 5 s
    /// the reports follow, by that much.
    @Test func senderReportsFollowASourceThatFellBehind() {
        let start = ContinuousClock.now
        var clock = RTSPPlayClock(playStart: start)
        var reports: [Duration] = []
        for index in 0..<600 {
            let arrival = start + Self.pts(index) + (index >= 100 ? .milliseconds(300) : .zero)
            _ = clock.stamp(presentationTime: Self.pts(index), arrival: arrival)
            if [99, 599].contains(index) { reports.append(clock.time(at: arrival) - (arrival - start)) }
        }
        #expect(reports == [.zero, .milliseconds(-300)], "\(reports)")
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

    /// A source whose clock starts again (presentation times back by more than a second: a new
    /// publisher) is anchored anew at the arrival: the stream's stamps never go back.
    @Test func aClockThatStartsAgainNeverGoesBack() {
        let start = ContinuousClock.now
        var clock = RTSPPlayClock(playStart: start)
        let before = (100..<103).map { clock.stamp(presentationTime: Self.pts($0), arrival: start + .milliseconds(33 * ($0 - 100))) }
        let after = clock.stamp(presentationTime: .zero, arrival: start + .milliseconds(200))
        let next = clock.stamp(presentationTime: Self.pts(1), arrival: start + .milliseconds(233))
        #expect(after == .milliseconds(200) && after > before.last!)
        #expect(next == after + Self.pts(1))
    }

    /// A viewer on an `EmbeddedChannel` that has sent SETUP (interleaved on `channels`) and PLAY
    /// for `/live` of `mounts`: its SSRC from SETUP's answer, its PLAY answer's RTP-Info.
    struct Viewer {
        let channel = EmbeddedChannel()
        var reader = RTSPMessageReader()
        var ssrc: UInt32?
        var rtpInfo: String?

        init(mounts: RTSPMounts, channels: String = "0-1") throws {
            try channel.pipeline.syncOperations.addHandler(
                RTSPConnectionHandler(mounts: mounts, configuration: .init(), logger: .streamingSilent))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 554)).wait()
            let setup = try response(to: "SETUP rtsp://127.0.0.1/live/track1 RTSP/1.0\r\nCSeq: 1\r\n"
                                         + "Transport: RTP/AVP/TCP;unicast;interleaved=\(channels)\r\n\r\n")
            ssrc = try RTSPTransport(parsing: #require(setup.header("Transport"))).ssrc
            let session = try #require(setup.header("Session")?.split(separator: ";").first)
            rtpInfo = try response(to: "PLAY rtsp://127.0.0.1/live RTSP/1.0\r\nCSeq: 2\r\nSession: \(session)\r\n\r\n").header("RTP-Info")
        }

        mutating func response(to request: String) throws -> RTSPResponse {
            try channel.writeInbound(ByteBuffer(string: request))
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                reader.append(buffer.readableBytesView)
                if case .response(let response) = try reader.next() { return response }
            }
            throw ChannelError.eof
        }

        /// The RTP packets written to the viewer so far, on any interleaved channel.
        mutating func packets() throws -> [(channel: UInt8, bytes: [UInt8])] {
            var packets: [(UInt8, [UInt8])] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                reader.append(buffer.readableBytesView)
                while let message = try reader.next() {
                    guard case .interleavedFrame(let number, let packet) = message else { continue }
                    packets.append((number, Array(packet)))
                }
            }
            return packets
        }
    }

    /// Six frames with presentation times 33.3 ms apart, an IDR first.
    static var frames: [LiveFrame] {
        var frames = StreamingFixtures.stream.frames.prefix(6).enumerated().map { index, frame in
            var frame = frame
            frame.presentationTime = Self.pts(index)
            return frame
        }
        frames[0].isKeyframe = true
        return frames
    }

    /// A burst of frames (pts 0, 33.3, 66.7 ms, …) broadcast at once: the RTP timestamps of the
    /// access units step by 3000 (90 kHz), every packet carries the SSRC SETUP named, and PLAY's
    /// RTP-Info names the track only (the first packet is the stream's, not made for the viewer).
    @Test func aBurstOfFramesStepsBy3000() throws {
        let mounts = RTSPMounts()
        let broadcaster = Broadcaster(queueLimit: 30)
        broadcaster.enableRTP(maximumTransmissionUnit: 1400)
        mounts.set("/live", RTSPMounts.Mount(broadcaster: broadcaster, format: .h264(StreamingFixtures.format)))
        var viewer = try Viewer(mounts: mounts)
        #expect(viewer.rtpInfo == "url=rtsp://127.0.0.1/live/track1")
        for frame in Self.frames { broadcaster.broadcast(frame) }
        var timestamps: [UInt32] = []
        for packet in try viewer.packets() where packet.channel == 0 {
            let header = try RTPHeader.parse(packet.bytes).header
            #expect(header.ssrc == viewer.ssrc)
            if header.timestamp != timestamps.last { timestamps.append(header.timestamp) }
        }
        #expect(timestamps.count == Self.frames.count)
        #expect(zip(timestamps.dropFirst(), timestamps).allSatisfy { $0 &- $1 == 3000 }, "\(timestamps)")
        _ = try? viewer.channel.finish()
    }

    /// Packets made once per stream: two viewers (interleaved on channels 0–1 and 4–5) get the
    /// same RTP packets byte for byte — one SSRC, one sequence — each on its own channel.
    @Test func everyViewerGetsTheStreamsPackets() throws {
        let mounts = RTSPMounts()
        let broadcaster = Broadcaster(queueLimit: 30)
        broadcaster.enableRTP(maximumTransmissionUnit: 1400)
        mounts.set("/live", RTSPMounts.Mount(broadcaster: broadcaster, format: .h264(StreamingFixtures.format)))
        var first = try Viewer(mounts: mounts), second = try Viewer(mounts: mounts, channels: "4-5")
        #expect(first.ssrc != nil && first.ssrc == second.ssrc)
        for frame in Self.frames { broadcaster.broadcast(frame) }
        let firstPackets = try first.packets(), secondPackets = try second.packets()
        #expect(firstPackets.count > Self.frames.count)
        #expect(Set(firstPackets.map(\.channel)) == [0] && Set(secondPackets.map(\.channel)) == [4])
        #expect(firstPackets.map(\.bytes) == secondPackets.map(\.bytes))
        _ = try? first.channel.finish()
        _ = try? second.channel.finish()
    }
}
