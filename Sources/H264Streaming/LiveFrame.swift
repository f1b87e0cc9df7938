public import H264
public import HEVC
public import MediaCore
public import NIOCore

/// One frame of a live stream — a video access unit (H.264 or H.265) or an audio frame (AAC,
/// G.711, Opus) — as a ``Broadcaster`` hands it to its outputs, in the order the source made
/// them.
///
/// An audio frame (``audioFormat`` non-nil, ``format`` nil) is never a keyframe here: outputs
/// start at a video keyframe, and the audio after it comes with the video; outputs that carry
/// no audio (raw Annex-B viewers, decoders) pass over it.
///
/// The frame stays length-prefixed (4-byte lengths) all the way to the wire: an RTSP viewer's
/// connection packetizes ``avcc`` directly (RFC 6184 for H.264, RFC 7798 for H.265, by
/// ``format``), with the format's parameter sets in front of each keyframe. The raw Annex-B
/// fan-out (``AnnexBFanOutServer``) writes ``annexB`` when the producer made it once for every
/// viewer (with its own choices, such as access unit delimiters); without it, each such
/// viewer's connection converts ``avcc``.
public struct LiveFrame: Sendable {
    /// The access unit's NAL units, each after a 4-byte big-endian length (an `EncodedFrame`'s
    /// `data`): AVCC for H.264, and the same framing (HVCC) for H.265 — the name is kept for both.
    /// For an audio frame, the codec frame (AAC: one raw access unit).
    public var avcc: [UInt8]
    /// The track's format: video or audio.
    public var media: MediaFormatDescription
    /// The stream's video format, of either codec: its parameter sets (SPS and PPS; VPS, SPS and
    /// PPS) go before each keyframe on the wire; nil for an audio frame.
    public var format: VideoFormatDescription? { media.video }
    /// The audio format of an audio frame; nil for a video frame.
    public var audioFormat: AudioFormatDescription? { media.audio }
    /// The H.264 format (SPS and PPS); nil for an H.265 or an audio frame (see ``format``).
    public var formatDescription: FormatDescription? { media.video?.h264 }
    /// True for a keyframe — an IDR access unit (H.264) or an IRAP picture (H.265: IDR, CRA or
    /// BLA): a viewer waiting to start takes its first frame here.
    public var isKeyframe: Bool
    /// The Annex-B bytes of the access unit for raw viewers, made once by the producer; nil:
    /// converted from ``avcc`` per viewer (parameter sets before each IDR).
    public var annexB: ByteBuffer?
    /// The access unit's presentation time on the stream's media clock (an `EncodedFrame`'s
    /// `presentationTimeStamp`); its origin does not matter, only the differences between
    /// frames. An RTSP viewer's RTP timestamps follow it: the first frame a viewer gets is
    /// stamped with its arrival since PLAY, and each later one that plus the difference of
    /// their presentation times, so frames that reach the connection together keep their
    /// spacing. Nil: each frame is stamped with the time it reaches the viewer's connection.
    public var presentationTime: Duration?
    /// The access unit's decoding time on the same clock as ``presentationTime``, for outputs
    /// that carry both (RTMP: the message timestamp, with PTS − DTS as the composition time);
    /// nil: the presentation time stands for it (a stream without B-frames).
    public var decodeTime: Duration?

    /// A frame of `avcc` bytes in `format`, of either codec.
    ///
    /// - Parameters:
    ///   - avcc: the access unit's NAL units, each after a 4-byte length.
    ///   - format: the stream's format (an H.264 `FormatDescription` or an H.265 `hvcC`).
    ///   - isKeyframe: true for an IDR access unit (H.264) or an IRAP picture (H.265).
    ///   - annexB: the Annex-B bytes for raw viewers, if the producer made them.
    ///   - presentationTime: the presentation time on the media clock (see ``presentationTime``).
    ///   - decodeTime: the decoding time on that clock (see ``decodeTime``).
    public init(avcc: [UInt8], format: VideoFormatDescription, isKeyframe: Bool, annexB: ByteBuffer? = nil,
                presentationTime: Duration? = nil, decodeTime: Duration? = nil) {
        self.avcc = avcc
        self.media = .video(format)
        self.isKeyframe = isKeyframe
        self.annexB = annexB
        self.presentationTime = presentationTime
        self.decodeTime = decodeTime
    }

    /// An audio frame of `format` at `presentationTime` on the stream's timeline (the one its
    /// video frames are on).
    ///
    /// - Parameters:
    ///   - audio: the codec frame (AAC: one raw access unit, no ADTS header).
    ///   - format: the audio track's format.
    ///   - presentationTime: when its first sample plays, on the stream's media clock.
    public init(audio: [UInt8], format: AudioFormatDescription, presentationTime: Duration?) {
        avcc = audio
        media = .audio(format)
        isKeyframe = false
        annexB = nil
        self.presentationTime = presentationTime
        decodeTime = nil
    }

    /// A frame of a source (a camera, a publisher, an RTMP stream, a file, an encoder), video or
    /// audio, its presentation and decoding times on the source's timeline.
    ///
    /// - Parameters:
    ///   - frame: a video frame (4-byte lengths) or an audio frame.
    ///   - annexB: the Annex-B bytes for raw viewers, if the producer made them (video only).
    public init?(_ frame: CompressedFrame, annexB: ByteBuffer? = nil) {
        switch frame.format {
        case .video(let format):
            self.init(avcc: frame.data, format: format, isKeyframe: frame.isKeyframe, annexB: annexB,
                      presentationTime: frame.presentationTime, decodeTime: frame.decodeTime)
        case .audio(let format):
            self.init(audio: frame.data, format: format, presentationTime: frame.presentationTime)
        }
    }

    /// The frame as the one frame value, its times zero when it has none (an audio frame is a
    /// keyframe there, as every audio frame decodes on its own).
    public var compressedFrame: CompressedFrame {
        CompressedFrame(data: avcc, format: media, presentationTime: presentationTime ?? .zero,
                        decodeTime: decodeTime ?? presentationTime ?? .zero, isKeyframe: isKeyframe || media.audio != nil)
    }

    /// A frame of H.264 `avcc` bytes in `formatDescription`.
    ///
    /// - Parameters:
    ///   - avcc: the access unit's NAL units, each after a 4-byte length.
    ///   - formatDescription: the stream's format (SPS and PPS).
    ///   - isKeyframe: true for an IDR access unit.
    ///   - annexB: the Annex-B bytes for raw viewers, if the producer made them.
    ///   - presentationTime: the presentation time on the media clock (see ``presentationTime``).
    ///   - decodeTime: the decoding time on that clock (see ``decodeTime``).
    public init(avcc: [UInt8], formatDescription: FormatDescription, isKeyframe: Bool, annexB: ByteBuffer? = nil,
                presentationTime: Duration? = nil, decodeTime: Duration? = nil) {
        self.init(avcc: avcc, format: .h264(formatDescription), isKeyframe: isKeyframe, annexB: annexB,
                  presentationTime: presentationTime, decodeTime: decodeTime)
    }

    /// The Annex-B bytes for a raw viewer: ``annexB``, else ``avcc`` converted, the format's
    /// parameter sets before a keyframe (H.264: unless it carries its own; H.265: before its
    /// IRAP picture, as `hevc_mp4toannexb` puts them).
    func annexBBytes(allocator: ByteBufferAllocator) throws -> ByteBuffer {
        if let annexB { return annexB }
        guard let format else { return allocator.buffer(capacity: 0) }
        let bytes = try format.annexB(fromSample: avcc, lengthSize: 4, withParameterSets: isKeyframe)
        var buffer = allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        return buffer
    }
}

/// What a ``Broadcaster`` writes to a viewer's channel: a frame, or the empty write
/// ``Broadcaster/closeAll(flushing:)`` uses to learn when the viewer's queue has drained
/// (handlers pass it on as an empty buffer).
enum BroadcastWrite: Sendable {
    case frame(FanOutFrame)
    case flush
}
