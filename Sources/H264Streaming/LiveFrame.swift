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

    /// A frame of `avcc` bytes in `formatDescription`.
    public init(avcc: [UInt8], formatDescription: FormatDescription, isKeyframe: Bool, annexB: ByteBuffer? = nil) {
        self.avcc = avcc
        self.formatDescription = formatDescription
        self.isKeyframe = isKeyframe
        self.annexB = annexB
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
