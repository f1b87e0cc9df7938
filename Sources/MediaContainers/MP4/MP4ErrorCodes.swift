public import MediaCore

/// The codes of the MP4 reader (``MP4Reader``, ``MP4BoxHeader``): what only ISO BMFF framing can
/// get wrong. Data that ends early is `MediaError.Code.truncated`, a value outside what the
/// specification allows `valueOutOfRange`, a codec this reader does not read `unsupported`.
extension MediaError.Code {
    /// A box's `size` is smaller than its own header, or runs past the end of the box (or file)
    /// that holds it: where the next box begins is unknown.
    public static let mp4BoxSizeInvalid = MediaError.Code(rawValue: "mp4BoxSizeInvalid")
    /// A box the file needs is absent (no `moov`, a track without `mdhd`, `stsd` or sample tables).
    public static let mp4MissingBox = MediaError.Code(rawValue: "mp4MissingBox")
    /// The sample tables (`stts`, `stsc`, `stsz`, `stco` …) or a `trun` disagree with each other
    /// or with the file: a tolerable one is a warning, the track's samples are then clamped to what
    /// they agree on.
    public static let mp4SampleTableInconsistent = MediaError.Code(rawValue: "mp4SampleTableInconsistent")
    /// A sample lies (wholly or partly) outside the file.
    public static let mp4SamplePastEnd = MediaError.Code(rawValue: "mp4SamplePastEnd")
    /// A `traf` names a `track_ID` the `moov` has no track (or no `trex`) for.
    public static let mp4UnknownTrack = MediaError.Code(rawValue: "mp4UnknownTrack")
}
