@testable import H264Streaming
import RTP
import Testing

/// The tracks of an RTSP session on one timeline: lined up by arrival before the sender reports,
/// by the reports' NTP ↔ RTP pairs after them, whatever each track's RTP clock origin and rate.
@Suite struct RTSPSessionTimelineTests {
    /// A camera's clocks: at wall-clock second `t` (from 2026-01-01), video's RTP timestamp is
    /// `videoOrigin + 90 000 t` and audio's `audioOrigin + 48 000 t`, the origins independent.
    struct Camera {
        var videoOrigin: UInt32
        var audioOrigin: UInt32
        let epoch: Int64 = 1_767_225_600

        func video(at seconds: Double) -> UInt32 { videoOrigin &+ UInt32(truncatingIfNeeded: Int64((seconds * 90_000).rounded())) }
        func audio(at seconds: Double) -> UInt32 { audioOrigin &+ UInt32(truncatingIfNeeded: Int64((seconds * 48_000).rounded())) }

        /// The sender report of a track at `seconds`.
        func report(at seconds: Double, rtp: UInt32) -> RTCPSenderReport {
            let whole = seconds.rounded(.down)
            return RTCPSenderReport(ssrc: 1, ntpTimestamp: RTCPSenderReport.ntpTimestamp(unixSeconds: epoch + Int64(whole),
                                                                                       nanoseconds: Int64((seconds - whole) * 1e9)),
                                    rtpTimestamp: rtp, packetCount: 0, octetCount: 0, canonicalName: "camera")
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    @Test(arguments: [(UInt32(1_000_000), UInt32(3_000_000_000)), (UInt32.max - 20_000, UInt32(7)), (UInt32(5), UInt32.max - 1_000)])
    func tracksWithDifferentClockOriginsShareOneTimelineAfterTheSenderReports(_ origins: (UInt32, UInt32)) {
        let camera = Camera(videoOrigin: origins.0, audioOrigin: origins.1)
        var timeline = RTSPSessionTimeline(start: .seconds(100), videoClockRate: 90_000, audioClockRate: 48_000)
        // Video's first frame (wall 0 s) arrives at 0 s; audio's first (wall 0.02 s) late, at 0.5 s.
        #expect(timeline.time(of: camera.video(at: 0), track: .video, arrival: .zero) == .seconds(100))
        let early = timeline.time(of: camera.audio(at: 0.02), track: .audio, arrival: .milliseconds(500))
        #expect(abs(Self.milliseconds(early - .seconds(100)) - 500) < 1, "placed by its arrival before the reports")
        #expect(!timeline.isSynchronized(.audio))
        timeline.senderReport(camera.report(at: 1, rtp: camera.video(at: 1)), for: .video)
        timeline.senderReport(camera.report(at: 1.01, rtp: camera.audio(at: 1.01)), for: .audio)
        for step in 1...50 {
            let wall = 1 + Double(step) * 0.04
            let video = timeline.time(of: camera.video(at: wall), track: .video, arrival: .milliseconds(Int64(wall * 1000)))
            let audio = timeline.time(of: camera.audio(at: wall), track: .audio, arrival: .milliseconds(Int64(wall * 1000) + 300))
            #expect(timeline.isSynchronized(.audio))
            #expect(abs(Self.milliseconds(video - audio)) < 1, "wall \(wall): video \(video), audio \(audio)")
            #expect(abs(Self.milliseconds(video - .seconds(100)) - wall * 1000) < 1, "video keeps its own RTP time")
        }
    }

    @Test func audioFirstIsTheReferenceAndVideoFollowsIt() {
        let camera = Camera(videoOrigin: 42, audioOrigin: 4_000_000_000)
        var timeline = RTSPSessionTimeline(audioClockRate: 48_000)
        #expect(timeline.time(of: camera.audio(at: 0), track: .audio, arrival: .seconds(10)) == .zero)
        let video = timeline.time(of: camera.video(at: 0), track: .video, arrival: .seconds(10) + .milliseconds(40))
        #expect(abs(Self.milliseconds(video) - 40) < 1)
        timeline.senderReport(camera.report(at: 0.5, rtp: camera.video(at: 0.5)), for: .video)
        timeline.senderReport(camera.report(at: 0.5, rtp: camera.audio(at: 0.5)), for: .audio)
        let audioLater = timeline.time(of: camera.audio(at: 2), track: .audio, arrival: .seconds(12))
        let videoLater = timeline.time(of: camera.video(at: 2), track: .video, arrival: .seconds(12))
        #expect(abs(Self.milliseconds(audioLater - videoLater)) < 1)
        #expect(abs(Self.milliseconds(audioLater) - 2000) < 1)
    }

    @Test func aVideoOnlySessionIsTheRTPTimelineOfItsTimestamps() {
        var timeline = RTSPSessionTimeline(start: .seconds(3))
        var reference = RTPTimeline(start: .seconds(3))
        for timestamp in [UInt32.max - 3000, UInt32.max, 2999, 2999 &+ 3000] {
            #expect(timeline.time(of: timestamp, track: .video, arrival: .zero) == reference.time(of: timestamp))
        }
    }
}
