import H264
import H264TestSupport
import Testing

/// The one frame-rate rule: a rate in frames per second as a fraction, and 25 fps for a stream
/// that signals none.
@Suite(.ownThread) struct FrameRateTests {
    @Test(arguments: [
        (30.0, 30, 1), (25.0, 25, 1), (30000.0 / 1001, 30000, 1001), (24000.0 / 1001, 24000, 1001),
        (60000.0 / 1001, 60000, 1001), (12.5, 12500, 1000), (29.97, 30000, 1001), (0.5, 500, 1000), (1000.0, 1000, 1),
    ])
    func approximating(rate: Double, numerator: Int, denominator: Int) {
        #expect(FrameRate(approximating: rate) == FrameRate(numerator: numerator, denominator: denominator))
    }

    @Test func frameDurations() {
        #expect(FrameRate(frameDuration: .milliseconds(40)) == FrameRate(numerator: 25, denominator: 1))
        #expect(FrameRate(frameDuration: .seconds(1001) / 30000) == FrameRate(numerator: 30000, denominator: 1001))
        #expect(FrameRate(frameDuration: .zero) == .unsignalled)
        #expect(FrameRate(numerator: 30000, denominator: 1001).frameDuration == .seconds(1001) / 30000)
        #expect(FrameRate(numerator: 30000, denominator: 1001).description == "30000/1001")
    }

    /// No SPS, or an SPS without VUI timing: 25 fps.
    @Test func unsignalledIs25() {
        #expect(FrameRate.unsignalled == FrameRate(numerator: 25, denominator: 1))
        #expect(FrameRate.framesPerSecond(signalledBy: nil) == 25)
    }
}
