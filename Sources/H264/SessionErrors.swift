/// Error codes of the sessions (`EncoderSession` in H264Encoder, `DecoderSession` in
/// H264Decoder), declared once here so that both modules throw the same code for the same
/// situation and a file importing both names either without ambiguity.
extension H264Error.Code {
    /// The call is not allowed in the session's current state: any call but `invalidate()`
    /// after `invalidate()` (the message is "CALL after invalidate"), `configure` once the
    /// session runs (field `configuration`), a wait from inside the output handler (the message
    /// is "CALL cannot be called from the output handler"). The same code and wording on both
    /// sessions.
    public static let invalidState = H264Error.Code(rawValue: "invalidState")
    /// A session configuration property has a value the session cannot use (the field names
    /// it). The same code for the encoder's and the decoder's configurations.
    public static let invalidConfiguration = H264Error.Code(rawValue: "invalidConfiguration")
}
