/// One compressed frame of a track, whatever its codec: what every source of this package hands
/// out (an RTSP camera or publisher, an RTMP stream, an FLV file, an encoder session) and every
/// output takes — VideoToolbox's `CMSampleBuffer` of compressed data.
///
/// A video frame is one access unit: its NAL units as they came (in-band parameter sets
/// included), each after a 4-byte big-endian length whatever the source's length size, and the
/// format its slices refer to. The codec is the format's (``VideoFormatDescription/codec``), so
/// code that carries frames never forks on it; code that parses one codec's syntax asks the
/// format for its own form (`frame.videoFormat?.h264`, `.hevc`).
///
/// An audio frame is one codec frame (an AAC raw access unit, an Opus packet, a run of G.711
/// samples) in the same value: ``format`` is a ``MediaFormatDescription``, whose cases are
/// media types, not codecs. Every audio frame is a keyframe.
public struct CompressedFrame: Hashable, Sendable {
    /// The format of the track the frame belongs to (VideoToolbox:
    /// `CMSampleBufferGetFormatDescription`).
    public var format: MediaFormatDescription
    /// The frame's bytes: for video, the access unit's NAL units, each after a 4-byte big-endian
    /// length (`nalUnitLengthSize` 4), in-band parameter sets included; for audio, the codec
    /// frame as it is decoded (AAC without an ADTS header).
    public var data: [UInt8]
    /// When the frame is shown, on the track's timeline (its origin is the source's: only
    /// differences between frames of one source matter).
    public var presentationTime: Duration
    /// When the frame is decoded, on the same timeline; at most ``presentationTime``, equal to it
    /// in a stream without B-frames.
    public var decodeTime: Duration
    /// True for a random access point — decoding may start here (VideoToolbox: no `NotSync`
    /// attachment): an H.264 IDR access unit, an H.265 IRAP picture (IDR, CRA, BLA).
    public var isKeyframe: Bool

    /// A frame of a track in `format`.
    ///
    /// - Parameters:
    ///   - data: the frame's bytes (video: NAL units after 4-byte lengths).
    ///   - format: the track's format.
    ///   - presentationTime: when the frame is shown.
    ///   - decodeTime: when it is decoded; nil (default): at its presentation time.
    ///   - isKeyframe: whether decoding may start at it.
    public init(data: [UInt8], format: MediaFormatDescription, presentationTime: Duration, decodeTime: Duration? = nil,
                isKeyframe: Bool) {
        self.data = data
        self.format = format
        self.presentationTime = presentationTime
        self.decodeTime = decodeTime ?? presentationTime
        self.isKeyframe = isKeyframe
    }

    /// A video frame (one access unit) in `format`, of either codec.
    ///
    /// - Parameters:
    ///   - data: the access unit's NAL units, each after a 4-byte big-endian length.
    ///   - format: the stream's format (an H.264 `FormatDescription` or an H.265 `hvcC`).
    ///   - presentationTime: when the picture is shown.
    ///   - decodeTime: when it is decoded; nil (default): at its presentation time.
    ///   - isKeyframe: whether decoding may start at it.
    public init(data: [UInt8], format: VideoFormatDescription, presentationTime: Duration, decodeTime: Duration? = nil,
                isKeyframe: Bool) {
        self.init(data: data, format: .video(format), presentationTime: presentationTime, decodeTime: decodeTime,
                  isKeyframe: isKeyframe)
    }

    /// An audio frame in `format`: one codec frame, at `presentationTime` on the track's
    /// timeline (a keyframe: every audio frame can be decoded on its own).
    ///
    /// - Parameters:
    ///   - data: the codec frame (AAC: one raw access unit, no ADTS header).
    ///   - format: the track's format.
    ///   - presentationTime: when the frame's first sample is played.
    public init(data: [UInt8], format: AudioFormatDescription, presentationTime: Duration) {
        self.init(data: data, format: .audio(format), presentationTime: presentationTime, isKeyframe: true)
    }

    /// The video format of a video frame; nil for a frame of another media type.
    public var videoFormat: VideoFormatDescription? { format.video }

    /// The audio format of an audio frame; nil for a frame of another media type.
    public var audioFormat: AudioFormatDescription? { format.audio }

    /// True for a video keyframe: where an output of a stream with video may start (its audio
    /// frames, each a keyframe of its own track, never start one — the video before the next
    /// keyframe could not be decoded).
    public var isVideoKeyframe: Bool { isKeyframe && format.video != nil }
}

/// The format of a track, by media type: what a ``CompressedFrame`` carries, so that one frame
/// value serves every track. Its cases are media types, never codecs: the codec is inside
/// (``VideoFormatDescription/codec``, ``AudioFormatDescription/codec``).
public enum MediaFormatDescription: Hashable, Sendable {
    /// A video track: H.264 or H.265 parameter sets and configuration record.
    case video(VideoFormatDescription)
    /// An audio track: AAC, G.711 or Opus, its rate, channels and configuration.
    case audio(AudioFormatDescription)

    /// The video format; nil for another media type.
    public var video: VideoFormatDescription? {
        switch self {
        case .video(let format): format
        case .audio: nil
        }
    }

    /// The audio format; nil for another media type.
    public var audio: AudioFormatDescription? {
        switch self {
        case .audio(let format): format
        case .video: nil
        }
    }
}
