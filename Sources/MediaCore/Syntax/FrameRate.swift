/// A frame rate as a fraction, `numerator / denominator` frames per second (`30/1`,
/// `30000/1001`): the one rule for turning a rate into a fraction and for the rate of a stream
/// that signals none.
///
/// The y4m header's `F` field, FFmpeg's time bases (`#tb` of framemd5 is its inverse) and x264's
/// `i_fps_num`/`i_fps_den` are all this fraction. A rate read from the SPS
/// (`SequenceParameterSet.frameRate`) is a `Double`; ``init(approximating:)`` turns it into a
/// fraction, and `framesPerSecond(signalledBy:)` (in `H264`) supplies ``unsignalled`` when the VUI has no
/// timing.
public struct FrameRate: Hashable, Sendable, CustomStringConvertible {
    /// Frames per `denominator` seconds.
    public var numerator: Int
    /// The seconds `numerator` frames take.
    public var denominator: Int

    /// A rate of `numerator / denominator` frames per second.
    public init(numerator: Int, denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The fraction for a rate in frames per second: a whole number as `N/1` (within 0.0005), an
    /// NTSC rate (N × 1000/1001, within 0.001) as `N×1000/1001`, anything else in thousandths
    /// (`12.5` → `12500/1000`).
    public init(approximating framesPerSecond: Double) {
        let rate = framesPerSecond
        if abs(rate - rate.rounded()) < 0.0005 {
            self.init(numerator: Int(rate.rounded()), denominator: 1)
            return
        }
        let ntsc = rate * 1.001
        if abs(ntsc - ntsc.rounded()) < 0.001 {
            self.init(numerator: Int(ntsc.rounded()) * 1000, denominator: 1001)
            return
        }
        self.init(numerator: Int((rate * 1000).rounded()), denominator: 1000)
    }

    /// The rate whose frames last `duration`: ``init(approximating:)`` of its inverse, or
    /// ``unsignalled`` for a duration that is not positive.
    public init(frameDuration duration: Duration) {
        let seconds = duration / .seconds(1)
        self = seconds > 0 ? FrameRate(approximating: 1 / seconds) : .unsignalled
    }

    /// The rate of a stream whose SPS signals none (no VUI timing information): 25 fps, as
    /// FFmpeg's raw H.264 demuxer assumes.
    public static let unsignalled = FrameRate(numerator: 25, denominator: 1)

    /// The rate in frames per second.
    public var framesPerSecond: Double { Double(numerator) / Double(denominator) }

    /// How long one frame lasts: `denominator / numerator` seconds.
    public var frameDuration: Duration { .seconds(1) * denominator / numerator }

    /// `numerator/denominator`, e.g. `30000/1001`.
    public var description: String { "\(numerator)/\(denominator)" }
}
