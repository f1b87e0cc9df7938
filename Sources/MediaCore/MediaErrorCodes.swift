/// Every code the core and the modules below the sessions throw or report, in one list (``MediaError/Code``): the
/// bitstream's (framing, syntax, parameter sets), then the sessions' (declared here so that
/// `EncoderSession` and `DecoderSession` throw the same code for the same situation, and a file
/// importing both names either without ambiguity), FLV's, RTP's and SDP's, RTSP's and RTMP's.
/// The codes of other modules (the y4m reader's, the encoder's, the decoder's) are declared there.
extension MediaError.Code {
    // MARK: Bitstream

    /// The data ended before a complete value could be read.
    public static let truncated = MediaError.Code(rawValue: "truncated")
    /// A NAL unit header has `forbidden_zero_bit` set.
    public static let forbiddenZeroBit = MediaError.Code(rawValue: "forbiddenZeroBit")
    /// A syntax element lies outside the range the specification allows.
    public static let valueOutOfRange = MediaError.Code(rawValue: "valueOutOfRange")
    /// An Exp-Golomb code has 32 or more leading zero bits.
    public static let expGolombOverflow = MediaError.Code(rawValue: "expGolombOverflow")
    /// A NAL unit has no bytes, or no payload where one is required.
    public static let emptyNALUnit = MediaError.Code(rawValue: "emptyNALUnit")
    /// A length prefix (AVCC) runs past the end of the data.
    public static let lengthPastEnd = MediaError.Code(rawValue: "lengthPastEnd")
    /// A NAL unit length size other than 1, 2 or 4 bytes.
    public static let invalidLengthSize = MediaError.Code(rawValue: "invalidLengthSize")
    /// Annex-B data does not begin with a start code.
    public static let missingStartCode = MediaError.Code(rawValue: "missingStartCode")
    /// An AVCDecoderConfigurationRecord is malformed.
    public static let invalidConfigurationRecord = MediaError.Code(rawValue: "invalidConfigurationRecord")
    /// A parameter set refers to another that is not known (e.g. a PPS naming a missing SPS).
    public static let missingParameterSet = MediaError.Code(rawValue: "missingParameterSet")
    /// A NAL unit is not of the type the operation requires.
    public static let unexpectedNALUnitType = MediaError.Code(rawValue: "unexpectedNALUnitType")
    /// Valid H.264 that this library does not support (e.g. slice groups).
    public static let unsupported = MediaError.Code(rawValue: "unsupported")
    /// An arithmetic result (sizes, macroblock counts) would overflow.
    public static let overflow = MediaError.Code(rawValue: "overflow")
    /// The RBSP trailing bits are missing or malformed.
    public static let invalidTrailingBits = MediaError.Code(rawValue: "invalidTrailingBits")
    /// A start code where a length prefix (AVCC) or an RTP payload's NAL unit header was
    /// expected: the writer put Annex-B there, and it is read as Annex-B (a warning; see
    /// ``AVCC/read(_:lengthSize:allowingEmptyNALUnits:)-(UnsafeRawBufferPointer,_,_)``).
    public static let unexpectedStartCode = MediaError.Code(rawValue: "unexpectedStartCode")

    // MARK: Sessions

    /// The call is not allowed in the session's current state: any call but `invalidate()`
    /// after `invalidate()` (the message is "CALL after invalidate"), `configure` once the
    /// session runs (field `configuration`), a wait from inside the output handler (the message
    /// is "CALL cannot be called from the output handler"). The same code and wording on both
    /// sessions.
    public static let invalidState = MediaError.Code(rawValue: "invalidState")
    /// A session configuration property has a value the session cannot use (the field names
    /// it). The same code for the encoder's and the decoder's configurations.
    public static let invalidConfiguration = MediaError.Code(rawValue: "invalidConfiguration")
    /// A session's throwing output handler threw (field `outputHandler`; the message is the
    /// error's description, the session's `outputHandlerError` is the error itself). The
    /// session's output has ended: every later call that feeds or waits for the session
    /// throws this error, until `invalidate()`.
    public static let outputHandlerFailed = MediaError.Code(rawValue: "outputHandlerFailed")

    // MARK: FLV

    /// FLV data does not begin with the file header `FLV` (fatal: there is no tag stream to follow).
    public static let invalidFLVHeader = MediaError.Code(rawValue: "invalidFLVHeader")
    /// The FLV tag stream cannot be followed any further: a tag header names no known tag type
    /// or a stream id other than 0, so where the next tag begins is unknown (fatal).
    public static let flvFramingLost = MediaError.Code(rawValue: "flvFramingLost")
    /// An FLV `PreviousTagSize` differs from the size of the tag before it (tolerable: the tag
    /// headers still say where each tag begins, as FFmpeg reads them).
    public static let flvPreviousTagSizeMismatch = MediaError.Code(rawValue: "flvPreviousTagSizeMismatch")

    // MARK: RTP and SDP

    /// An RTP packet arrived after the depacketizer had given up waiting for it (or twice): it is
    /// dropped (`RTPDepacketizer`).
    public static let latePacket = MediaError.Code(rawValue: "latePacket")
    /// An FU-A fragment arrived without the fragment that starts its NAL unit (the stream began
    /// mid-NAL unit, or the sender is broken): the NAL unit and its access unit are dropped.
    public static let missingFragmentStart = MediaError.Code(rawValue: "missingFragmentStart")
    /// A fragmented NAL unit was interrupted before its end fragment: the part received is
    /// dropped with its access unit.
    public static let incompleteFragment = MediaError.Code(rawValue: "incompleteFragment")
    /// An RTP packet from another synchronization source than the stream's (`SSRC`): the
    /// depacketizer starts over with the new source.
    public static let ssrcChanged = MediaError.Code(rawValue: "ssrcChanged")
    /// An RTP packet whose payload type is not the one configured: dropped.
    public static let unexpectedPayloadType = MediaError.Code(rawValue: "unexpectedPayloadType")
    /// A packet too large for the configured MTU in packetization-mode 0 (single NAL unit): the
    /// encoder must make smaller slices, or the session use packetization-mode 1.
    public static let nalUnitTooLarge = MediaError.Code(rawValue: "nalUnitTooLarge")
    /// An SDP session description lacks what an H.264 stream needs, or says it wrongly.
    public static let invalidSessionDescription = MediaError.Code(rawValue: "invalidSessionDescription")

    // MARK: RTSP

    /// An RTSP message whose request line, header lines or `Content-Length` break the RTSP 1.0
    /// syntax (RFC 2326 clause 6): answered with 400 Bad Request (`RTSPStatus.badRequest`).
    public static let invalidRTSPMessage = MediaError.Code(rawValue: "invalidRTSPMessage")
    /// An RTSP message larger than the reader's bounds (its request line, its header section or
    /// its body): the connection's framing is lost, so the answer (414, 400 or 413) is the last.
    public static let rtspMessageTooLarge = MediaError.Code(rawValue: "rtspMessageTooLarge")
    /// A request of another protocol version than `RTSP/1.0`: answered with 505.
    public static let unsupportedRTSPVersion = MediaError.Code(rawValue: "unsupportedRTSPVersion")
    /// A `Transport` header (RFC 2326 clause 12.39) that cannot be read.
    public static let invalidTransport = MediaError.Code(rawValue: "invalidTransport")
    /// A header of a server's answer whose value breaks RFC 2326 but does not stop the session
    /// (`RTP-Info` with an unreadable `seq` or `rtptime`, or a `url` naming no stream; a
    /// `Content-Base` without a scheme): tolerated, with a warning naming the header and the
    /// parameter; the value is ignored or repaired.
    public static let invalidRTSPHeader = MediaError.Code(rawValue: "invalidRTSPHeader")

    // MARK: RTMP

    /// AMF0 data that breaks its syntax (AMF0 specification, Adobe 2007): an unknown or
    /// unsupported type marker, an object property without its end marker, a count larger than
    /// the bytes that remain could hold, or nesting deeper than the decoder's bound. Its field
    /// names the value being read.
    public static let invalidAMF0 = MediaError.Code(rawValue: "invalidAMF0")
    /// An RTMP chunk stream that cannot be followed (RTMP specification clause 5.3): a chunk of
    /// type 1, 2 or 3 on a chunk stream that has had no type 0 chunk, a message whose length
    /// changes between its chunks, or an unknown message where the framing depends on it. Fatal:
    /// the connection's framing is lost.
    public static let invalidRTMPChunk = MediaError.Code(rawValue: "invalidRTMPChunk")
    /// A `Set Chunk Size` of 0 or above 2^31 − 1 (RTMP clause 5.4.1), or one above the reader's
    /// bound (65,536 by default): fatal, as FFmpeg and nginx-rtmp treat it.
    public static let rtmpChunkSizeOutOfRange = MediaError.Code(rawValue: "rtmpChunkSizeOutOfRange")
    /// An RTMP message longer than the reader's bound: fatal (nothing is allocated for it).
    public static let rtmpMessageTooLarge = MediaError.Code(rawValue: "rtmpMessageTooLarge")
    /// An RTMP handshake that breaks clause 5.2: a version other than 3 in C0/S0.
    public static let invalidRTMPHandshake = MediaError.Code(rawValue: "invalidRTMPHandshake")
    /// An RTMP message whose payload does not hold what its type says (a protocol control
    /// message of the wrong length, a command without its name and transaction id).
    public static let invalidRTMPMessage = MediaError.Code(rawValue: "invalidRTMPMessage")
}
