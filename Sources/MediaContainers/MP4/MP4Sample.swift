/// One sample as the tables (or a `trun`) place it: where its bytes are and when it is decoded
/// and presented, in the track's timescale, before the edit list.
public struct MP4Sample: Hashable, Sendable {
    /// The file offset of its first byte.
    public var offset: Int
    /// Its size in bytes.
    public var size: Int
    /// Its decoding time in the track's timescale (`stts` sums, or `tfdt` + `trun` durations).
    public var decodeTime: Int64
    /// `ctts` / `trun` `sample_composition_time_offset`: presentation − decoding time.
    public var compositionOffset: Int64
    /// A sync sample (`stss`, or a `trun`'s sample flags): decoding may start here.
    public var isSync: Bool
    /// The 1-based index of its `stsd` entry.
    public var descriptionIndex: Int

    /// A sample of its parts.
    public init(offset: Int, size: Int, decodeTime: Int64, compositionOffset: Int64, isSync: Bool, descriptionIndex: Int) {
        self.offset = offset
        self.size = size
        self.decodeTime = decodeTime
        self.compositionOffset = compositionOffset
        self.isSync = isSync
        self.descriptionIndex = descriptionIndex
    }
}
