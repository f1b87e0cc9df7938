public import H264

/// Error codes of the encoder session. Errors are `H264Error` values (one error type for
/// the whole toolkit) whose `field` names the property, argument or plane at fault. The codes
/// both sessions throw, `invalidState` and `invalidConfiguration`, are declared once, in H264.
extension H264Error.Code {
    /// A ``VideoFrame`` is unusable: zero or odd size for 4:2:0, planes too small, strides
    /// shorter than a row.
    public static let invalidFrame = H264Error.Code(rawValue: "invalidFrame")
    /// A frame's presentation time stamp is not later than the previous frame's (x264 needs
    /// strictly increasing time stamps).
    public static let invalidTimestamp = H264Error.Code(rawValue: "invalidTimestamp")
    /// libx264 refused: opening the encoder, encoding a frame or reconfiguring failed.
    public static let encoderFailed = H264Error.Code(rawValue: "encoderFailed")
}
