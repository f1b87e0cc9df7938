public import MediaCore
public import H264

/// One frame read from an FLV tag (or an RTMP message), of any codec and either media: an
/// access unit of an H.264 or H.265 video tag, or one frame of an AAC or G.711 audio tag. It
/// holds the `CompressedFrame` every source of this package hands out, and what only FLV says
/// of it — the tag's millisecond times, `FrameType`, syntax and place in the file.
///
/// For an audio frame, the video-only properties are fixed: ``frameType`` is
/// `FLVVideoTag.FrameType.keyframe`, ``compositionTime`` 0, ``syntax`` legacy and ``format``
/// nil; ``audioFormat`` is its format.
public struct FLVFrame: Hashable, Sendable {
    /// The frame. Video: its NAL units with 4-byte lengths (whatever length size the file
    /// used), the format of the sequence header in force, its presentation and decoding times
    /// (the tag's milliseconds as `Duration`s) and whether it is a keyframe (the tag's
    /// ``frameType``). Audio: the codec frame (raw AAC, G.711 samples), its format (the AAC
    /// sequence header in force, or G.711 at 8 kHz), the tag's time; always a keyframe.
    public var frame: CompressedFrame
    /// The tag's timestamp: the decoding time in milliseconds.
    public var decodeTime: Int64
    /// `CompositionTime`: presentation time − decoding time, in milliseconds (may be negative).
    public var compositionTime: Int32
    /// `FrameType` as the tag says it.
    public var frameType: FLVVideoTag.FrameType
    /// The syntax of the tag (legacy or Enhanced RTMP).
    public var syntax: FLVVideoTag.Syntax
    /// Where the tag begins in the file (or, for RTMP, in the tags the messages were read as).
    public var byteOffset: Int
    /// The tag's size: 11 + `DataSize`.
    public var byteCount: Int

    /// Creates a frame from its parts.
    public init(frame: CompressedFrame, decodeTime: Int64, compositionTime: Int32, frameType: FLVVideoTag.FrameType,
                syntax: FLVVideoTag.Syntax, byteOffset: Int, byteCount: Int) {
        self.frame = frame
        self.decodeTime = decodeTime
        self.compositionTime = compositionTime
        self.frameType = frameType
        self.syntax = syntax
        self.byteOffset = byteOffset
        self.byteCount = byteCount
    }

    /// Creates a frame of `data` (NAL units after 4-byte lengths) in `format`, its
    /// `CompressedFrame` timed by the milliseconds given and a keyframe when `frameType` says so.
    public init(data: [UInt8], format: VideoFormatDescription, decodeTime: Int64, compositionTime: Int32,
                frameType: FLVVideoTag.FrameType, syntax: FLVVideoTag.Syntax, byteOffset: Int = 0, byteCount: Int = 0) {
        let presentationTime = decodeTime + Int64(compositionTime)
        self.init(frame: CompressedFrame(data: data, format: format, presentationTime: .milliseconds(presentationTime),
                                         decodeTime: .milliseconds(decodeTime), isKeyframe: frameType.isKeyframe),
                  decodeTime: decodeTime, compositionTime: compositionTime, frameType: frameType, syntax: syntax,
                  byteOffset: byteOffset, byteCount: byteCount)
    }

    /// Creates an audio frame of `data` (one raw AAC frame, or G.711 samples) in `audioFormat`
    /// at `timestamp` milliseconds: a keyframe, its composition time 0.
    public init(data: [UInt8], audioFormat: AudioFormatDescription, timestamp: Int64, byteOffset: Int = 0, byteCount: Int = 0) {
        self.init(frame: CompressedFrame(data: data, format: audioFormat, presentationTime: .milliseconds(timestamp)),
                  decodeTime: timestamp, compositionTime: 0, frameType: .keyframe, syntax: .legacy,
                  byteOffset: byteOffset, byteCount: byteCount)
    }

    /// The frame's bytes: a video frame's NAL units, each after a 4-byte big-endian length; an
    /// audio frame's codec frame.
    public var data: [UInt8] { frame.data }

    /// The video format of the sequence header in force when the frame came; nil for an audio
    /// frame.
    public var format: VideoFormatDescription? { frame.videoFormat }

    /// The audio format of an audio frame (the AAC sequence header in force, or G.711); nil for
    /// a video frame.
    public var audioFormat: AudioFormatDescription? { frame.audioFormat }

    /// The presentation time in milliseconds: ``decodeTime`` + ``compositionTime``.
    public var presentationTime: Int64 { decodeTime + Int64(compositionTime) }

    /// Whether the frame is a keyframe (`CompressedFrame.isKeyframe`): the reader sets it when
    /// the tag marks one (`FrameType` 1 or 4).
    public var isKeyframe: Bool { frame.isKeyframe }

    /// The frame as an H.264 access unit, for code that reads H.264 syntax: the same bytes, each
    /// NAL unit's type from its header byte, the format's `FormatDescription`, and the tag's
    /// offset and size as `AccessUnit.streamOffset` and `AccessUnit.byteCount`; nil for a
    /// frame of another codec.
    public var h264AccessUnit: AccessUnit? {
        guard format?.h264 != nil else { return nil }
        var unit = AccessUnit(frame)
        unit.streamOffset = byteOffset
        unit.byteCount = byteCount
        return unit
    }
}

/// The name of ``FLVFrame`` before FLV audio: it held video frames only.
@available(*, deprecated, renamed: "FLVFrame")
public typealias FLVVideoFrame = FLVFrame
