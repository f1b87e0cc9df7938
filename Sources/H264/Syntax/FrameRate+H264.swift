public import MediaCore

extension FrameRate {
    /// The frames per second of a stream: its SPS's VUI timing (``SequenceParameterSet/frameRate``),
    /// or `unsignalled` (25) without one or without an SPS.
    public static func framesPerSecond(signalledBy sps: SequenceParameterSet?) -> Double {
        sps?.frameRate ?? unsignalled.framesPerSecond
    }
}
