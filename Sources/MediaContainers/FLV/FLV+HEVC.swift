public import HEVC

// H.265 in FLV and Enhanced RTMP (`hvc1`): the FLV tags and reader of this module carry its
// frames as they carry H.264's; this reads one as module HEVC's access unit.

extension FLVFrame {
    /// The frame as an H.265 access unit, for code that reads H.265 syntax: the same
    /// 4-byte-length bytes, the tag's offset and size, and each NAL unit's type from its
    /// two-byte header; nil for a frame of another codec.
    public var hevcAccessUnit: HEVCAccessUnit? {
        guard format?.codec == .hevc else { return nil }
        var unit = HEVCAccessUnit(frame)
        unit.streamOffset = byteOffset
        unit.byteCount = byteCount
        return unit
    }
}
