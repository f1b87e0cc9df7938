public import H264

/// Error codes of the decoder session. Errors are `H264Error` values (one error type for the
/// whole toolkit) whose `field` names the argument or property at fault.
extension H264Error.Code {
    /// The call is not allowed in the decoder session's state (for example `decode` after
    /// `invalidate()`, or `waitForAsynchronousFrames()` from inside the output handler).
    ///
    /// A code of its own rather than the encoder's `invalidState`, so that a file importing both
    /// `H264Encoder` and `H264Decoder` can name either without ambiguity.
    public static let invalidDecoderState = H264Error.Code(rawValue: "invalidDecoderState")
    /// libavcodec refused: opening the decoder failed, or it reported an error other than damaged
    /// input (out of memory, an internal failure).
    public static let decoderFailed = H264Error.Code(rawValue: "decoderFailed")
    /// A decoder configuration property has a value the decoder cannot use.
    public static let invalidDecoderConfiguration = H264Error.Code(rawValue: "invalidDecoderConfiguration")
}
