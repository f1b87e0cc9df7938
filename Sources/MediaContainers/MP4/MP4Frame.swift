public import MediaCore

/// One sample of an MP4 track read as a frame: the `CompressedFrame` every source of this
/// package hands out, and what only MP4 says of it — its track, its times in the track's
/// timescale and its place in the file.
public struct MP4Frame: Hashable, Sendable {
    /// The frame: video NAL units after 4-byte lengths (whatever length size the file used;
    /// Annex-B inside a sample is rewritten), audio codec frames as stored; times as `Duration`s
    /// of the edit-shifted ticks below; a keyframe when `stss` (or the `trun` flags) say so.
    public var frame: CompressedFrame
    /// The track's `track_ID`.
    public var trackID: UInt32
    /// The decoding time in ``timescale`` ticks, the edit list's shift applied (may be negative).
    public var decodeTimestamp: Int64
    /// The presentation time in ``timescale`` ticks (decoding time + composition offset), shifted.
    public var presentationTimestamp: Int64
    /// The track's timescale.
    public var timescale: UInt32
    /// The sample's file offset.
    public var byteOffset: Int
    /// The sample's size in the file.
    public var byteCount: Int

    /// A frame of its parts.
    public init(frame: CompressedFrame, trackID: UInt32, decodeTimestamp: Int64, presentationTimestamp: Int64,
                timescale: UInt32, byteOffset: Int, byteCount: Int) {
        self.frame = frame
        self.trackID = trackID
        self.decodeTimestamp = decodeTimestamp
        self.presentationTimestamp = presentationTimestamp
        self.timescale = timescale
        self.byteOffset = byteOffset
        self.byteCount = byteCount
    }

    /// The frame's bytes.
    public var data: [UInt8] { frame.data }
    /// Whether the frame is a keyframe (sync sample).
    public var isKeyframe: Bool { frame.isKeyframe }
}
