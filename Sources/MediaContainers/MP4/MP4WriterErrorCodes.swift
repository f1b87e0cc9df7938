public import MediaCore

/// The codes the MP4 writers throw (ISO/IEC 14496-12 and -14/-15), beside the core's.
extension MediaError.Code {
    /// A format no MP4 sample entry that players accept can hold (G.711 µ-law and A-law):
    /// convert the track first (to AAC, as for RTMP). The field names the codec.
    public static let mp4UnsupportedCodec = MediaError.Code(rawValue: "mp4UnsupportedCodec")
    /// A frame whose decoding time is not after the previous frame's of the same track: an MP4
    /// sample table counts decoding-time deltas, which cannot be negative.
    public static let mp4DecodeTimeNotIncreasing = MediaError.Code(rawValue: "mp4DecodeTimeNotIncreasing")
    /// A call the MP4 writer's state does not allow (a frame after `finish()`, a track of a media
    /// type the fragmented writer was not given).
    public static let mp4WriterState = MediaError.Code(rawValue: "mp4WriterState")
    /// The file system refused a read or a write of the MP4 file writer (the message says
    /// which file and the `errno`).
    public static let mp4FileError = MediaError.Code(rawValue: "mp4FileError")
}
