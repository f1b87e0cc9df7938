public import H264

/// Error codes of the decoder session. Errors are `MediaError` values (one error type for the
/// whole toolkit) whose `field` names the argument or property at fault. The codes both
/// sessions throw, `invalidState` and `invalidConfiguration`, are declared once, in H264.
extension MediaError.Code {
    /// The decoder's former name of `invalidState`, now the one code of both sessions for a
    /// call their state does not allow.
    @available(*, deprecated, renamed: "invalidState")
    public static var invalidDecoderState: MediaError.Code { .invalidState }
    /// libavcodec refused: opening the decoder failed, or it reported an error other than damaged
    /// input (out of memory, an internal failure).
    public static let decoderFailed = MediaError.Code(rawValue: "decoderFailed")
    /// The decoder's former name of `invalidConfiguration`, now the one code of both sessions
    /// for an unusable configuration property.
    @available(*, deprecated, renamed: "invalidConfiguration")
    public static var invalidDecoderConfiguration: MediaError.Code { .invalidConfiguration }
}
