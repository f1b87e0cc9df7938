extension H264Error.Code {
    /// AMF0 data that breaks its syntax (AMF0 specification, Adobe 2007): an unknown or
    /// unsupported type marker, an object property without its end marker, a count larger than
    /// the bytes that remain could hold, or nesting deeper than the decoder's bound. Its field
    /// names the value being read.
    public static let invalidAMF0 = H264Error.Code(rawValue: "invalidAMF0")
    /// An RTMP chunk stream that cannot be followed (RTMP specification clause 5.3): a chunk of
    /// type 1, 2 or 3 on a chunk stream that has had no type 0 chunk, a message whose length
    /// changes between its chunks, or an unknown message where the framing depends on it. Fatal:
    /// the connection's framing is lost.
    public static let invalidRTMPChunk = H264Error.Code(rawValue: "invalidRTMPChunk")
    /// A `Set Chunk Size` of 0 or above 2^31 − 1 (RTMP clause 5.4.1), or one above the reader's
    /// bound (65,536 by default): fatal, as FFmpeg and nginx-rtmp treat it.
    public static let rtmpChunkSizeOutOfRange = H264Error.Code(rawValue: "rtmpChunkSizeOutOfRange")
    /// An RTMP message longer than the reader's bound: fatal (nothing is allocated for it).
    public static let rtmpMessageTooLarge = H264Error.Code(rawValue: "rtmpMessageTooLarge")
    /// An RTMP handshake that breaks clause 5.2: a version other than 3 in C0/S0.
    public static let invalidRTMPHandshake = H264Error.Code(rawValue: "invalidRTMPHandshake")
    /// An RTMP message whose payload does not hold what its type says (a protocol control
    /// message of the wrong length, a command without its name and transaction id).
    public static let invalidRTMPMessage = H264Error.Code(rawValue: "invalidRTMPMessage")
}
