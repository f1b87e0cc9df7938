import H264
import H264TestSupport
import Testing
import RTP

/// `RTPTimeline`: 90 kHz timestamps as times from the first, across the 32-bit wrap, stepping
/// back for B-frames, from a given start.
@Suite(.ownThread) struct RTPTimelineTests {
    @Test func timesGoOnAcrossTheWrapAndStepBack() {
        var timeline = RTPTimeline()
        #expect(!timeline.hasStarted)
        #expect(timeline.time(of: UInt32.max - 3_499) == .zero) // 2³² − 3,500
        #expect(timeline.hasStarted)
        #expect(timeline.time(of: 1_000) == .milliseconds(50)) // 4,500 ticks later, past the wrap
        #expect(timeline.time(of: UInt32.max - 499) == .seconds(1) * 3_000 / 90_000) // a step back, before the wrap
        #expect(timeline.ticks(of: 1_000 &+ 90_000) == 94_500)
    }

    @Test func aStartAndAnotherClockRate() {
        var timeline = RTPTimeline(start: .seconds(10), clockRate: 8_000)
        #expect(timeline.time(of: 123) == .seconds(10))
        #expect(timeline.time(of: 123 + 4_000) == .seconds(10.5))
        #expect(RTPTimeline(clockRate: 0).clockRate == 1)
    }
}
