import H264Streaming
import H264TestSupport
import Testing

/// The pacing pieces of a live stream: the doorbell that wakes a sleeping loop early, and the
/// frame schedule with its absolute deadlines.
@Suite(.ownThread) struct PacingTests {
    /// A ring wakes a sleeper long before its deadline; a ring while nobody sleeps wakes the
    /// next sleep at once. (No time limit: a broken doorbell sleeps to the 10-minute deadline and
    /// fails the check; a time limit would also fire while a loaded host starves the test.)
    @Test func theDoorbellWakesAnEarlySleeper() async {
        let doorbell = Doorbell()
        let farAway = Duration.seconds(600)
        doorbell.ring()
        let first = ContinuousClock.now + farAway
        await doorbell.sleep(until: first)
        #expect(ContinuousClock.now < first, "a ring before the sleep was lost")
        let second = ContinuousClock.now + farAway
        async let sleeper: Void = doorbell.sleep(until: second)
        doorbell.ring()
        await sleeper
        #expect(ContinuousClock.now < second, "a ring during the sleep did not wake it")
    }

    /// The schedule: absolute deadlines, pulled forward by at most one interval for an IDR,
    /// restarted from now after falling over a second behind.
    @Test func theScheduleKeepsAbsoluteDeadlines() {
        let start = ContinuousClock.now
        var schedule = FrameSchedule(interval: .milliseconds(40), start: start)
        #expect(schedule.due(keyframeWanted: false) == start)
        schedule.advance(now: start + .milliseconds(5))
        #expect(schedule.due(keyframeWanted: false) == start + .milliseconds(40), "not from when the frame went")
        #expect(schedule.due(keyframeWanted: true) == start)
        schedule.advance(now: start + .seconds(3))
        #expect(schedule.due(keyframeWanted: false) == start + .seconds(3), "over a second behind: counts from now")
    }
}
