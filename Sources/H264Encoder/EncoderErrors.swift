public import H264

/// Error codes of the encoder session. Errors are `MediaError` values (one error type for
/// the whole toolkit) whose `field` names the property, argument or plane at fault. The codes
/// both sessions throw, `invalidState` and `invalidConfiguration`, are declared once, in H264.
extension MediaError.Code {
    /// A ``VideoFrame`` is unusable: zero or odd size for 4:2:0, planes too small, strides
    /// shorter than a row.
    public static let invalidFrame = MediaError.Code(rawValue: "invalidFrame")
    /// A frame's presentation time stamp is not later than the previous frame's (x264 needs
    /// strictly increasing time stamps).
    public static let invalidTimestamp = MediaError.Code(rawValue: "invalidTimestamp")
    /// libx264 refused: opening the encoder, encoding a frame or reconfiguring failed.
    public static let encoderFailed = MediaError.Code(rawValue: "encoderFailed")
}
