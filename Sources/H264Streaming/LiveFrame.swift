public import H264
public import NIOCore

/// One access unit of a live stream, as a ``Broadcaster`` hands it to its viewers.
///
/// The frame stays AVCC (4-byte lengths) all the way to the wire: an RTSP viewer's connection
/// packetizes ``avcc`` directly (RFC 6184), with the parameter sets of ``formatDescription``
/// in front of each IDR. The raw Annex-B fan-out (``AnnexBFanOutServer``) writes ``annexB``
/// when the producer made it once for every viewer (with its own choices, such as access unit
/// delimiters); without it, each such viewer's connection converts ``avcc``.
public struct LiveFrame: Sendable {
    /// The access unit's NAL units, each after a 4-byte big-endian length (an `EncodedFrame`'s
    /// `data`).
    public var avcc: [UInt8]
    /// The stream's format: its SPS and PPS go before each IDR on the wire.
    public var formatDescription: FormatDescription
    /// True for an IDR access unit: a viewer waiting to start takes its first frame here.
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

    /// A frame of `avcc` bytes in `formatDescription`.
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
        self.avcc = avcc
        self.formatDescription = formatDescription
        self.isKeyframe = isKeyframe
        self.annexB = annexB
        self.presentationTime = presentationTime
        self.decodeTime = decodeTime
    }

    /// The Annex-B bytes for a raw viewer: ``annexB``, else ``avcc`` converted.
    func annexBBytes(allocator: ByteBufferAllocator) throws -> ByteBuffer {
        if let annexB { return annexB }
        let bytes = try AnnexB.fromAVCC(avcc, lengthSize: 4,
                                        parameterSets: isKeyframe ? formatDescription.configurationRecord : nil)
        var buffer = allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        return buffer
    }
}

/// What a ``Broadcaster`` writes to a viewer's channel: a frame, or the empty write
/// ``Broadcaster/closeAll(flushing:)`` uses to learn when the viewer's queue has drained
/// (handlers pass it on as an empty buffer).
enum BroadcastWrite: Sendable {
    case frame(LiveFrame)
    case flush
}
