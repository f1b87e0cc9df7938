extension H264Error.Code {
    /// An RTSP message whose request line, header lines or `Content-Length` break the RTSP 1.0
    /// syntax (RFC 2326 clause 6): answered with 400 Bad Request (``RTSPStatus/badRequest``).
    public static let invalidRTSPMessage = H264Error.Code(rawValue: "invalidRTSPMessage")
    /// An RTSP message larger than the reader's bounds (its request line, its header section or
    /// its body): the connection's framing is lost, so the answer (414, 400 or 413) is the last.
    public static let rtspMessageTooLarge = H264Error.Code(rawValue: "rtspMessageTooLarge")
    /// A request of another protocol version than `RTSP/1.0`: answered with 505.
    public static let unsupportedRTSPVersion = H264Error.Code(rawValue: "unsupportedRTSPVersion")
    /// A `Transport` header (RFC 2326 clause 12.39) that cannot be read.
    public static let invalidTransport = H264Error.Code(rawValue: "invalidTransport")
    /// A header of a server's answer whose value breaks RFC 2326 but does not stop the session
    /// (`RTP-Info` with an unreadable `seq` or `rtptime`, or a `url` naming no stream; a
    /// `Content-Base` without a scheme): tolerated, with a warning naming the header and the
    /// parameter; the value is ignored or repaired.
    public static let invalidRTSPHeader = H264Error.Code(rawValue: "invalidRTSPHeader")
}
