extension H264Error.Code {
    /// FLV data does not begin with the file header `FLV` (fatal: there is no tag stream to follow).
    public static let invalidFLVHeader = H264Error.Code(rawValue: "invalidFLVHeader")
    /// The FLV tag stream cannot be followed any further: a tag header names no known tag type
    /// or a stream id other than 0, so where the next tag begins is unknown (fatal).
    public static let flvFramingLost = H264Error.Code(rawValue: "flvFramingLost")
    /// An FLV `PreviousTagSize` differs from the size of the tag before it (tolerable: the tag
    /// headers still say where each tag begins, as FFmpeg reads them).
    public static let flvPreviousTagSizeMismatch = H264Error.Code(rawValue: "flvPreviousTagSizeMismatch")
}
