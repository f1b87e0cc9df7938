public import H264
/// One access unit read from an FLV video tag, with its timing.
public struct FLVVideoFrame: Hashable, Sendable {
    /// The access unit in AVCC (or H.265's HVCC) with 4-byte lengths (whatever length size the
    /// file used), its H.264 NAL unit types and the format of the sequence header in force (both
    /// left empty for H.265: module `HEVC`'s `hevcAccessUnit` reads its types). Its
    /// `AccessUnit.streamOffset` is where the tag begins in the file and its
    /// `AccessUnit.byteCount` the tag's size (11 + `DataSize`).
    public var accessUnit: AccessUnit
    /// The tag's timestamp: the decoding time in milliseconds.
    public var decodeTime: Int64
    /// `CompositionTime`: presentation time − decoding time, in milliseconds (may be negative).
    public var compositionTime: Int32
    /// `FrameType` as the tag says it.
    public var frameType: FLVVideoTag.FrameType
    /// The syntax of the tag (legacy or Enhanced RTMP).
    public var syntax: FLVVideoTag.Syntax

    /// Creates a frame.
    public init(accessUnit: AccessUnit, decodeTime: Int64, compositionTime: Int32, frameType: FLVVideoTag.FrameType,
                syntax: FLVVideoTag.Syntax) {
        self.accessUnit = accessUnit
        self.decodeTime = decodeTime
        self.compositionTime = compositionTime
        self.frameType = frameType
        self.syntax = syntax
    }

    /// The presentation time in milliseconds: ``decodeTime`` + ``compositionTime``.
    public var presentationTime: Int64 { decodeTime + Int64(compositionTime) }

    /// True when the tag marks a keyframe (`FrameType` 1 or 4).
    public var isKeyframe: Bool { frameType.isKeyframe }
}
