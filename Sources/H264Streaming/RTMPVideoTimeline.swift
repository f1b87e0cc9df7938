import H264
import HEVC
import MediaContainers
import RTMPMessages

/// The video half of a publish, sans I/O: turns access units into RTMP video messages (FLV
/// video tag bodies, `FLVVideoTag`; H.265 in `hvc1` tags) — the sequence header before the first frame and again
/// at each format change, timestamps the decoding time in milliseconds since the first frame,
/// the composition time PTS − DTS in the body (negative values kept) — and decides what to drop
/// when the connection cannot keep up: everything up to the next IDR.
struct RTMPVideoTimeline: Sendable {
    private(set) var messageStreamId: UInt32
    let syntax: FLVVideoTag.Syntax
    private(set) var format: VideoFormatDescription?
    private var origin: Duration?
    /// The last message's timestamp (RTMP timestamps never go back).
    private(set) var lastTimestamp: UInt32 = 0
    /// Closed until the next IDR: the first frame, and after a drop (the one keyframe rule).
    private var gate = KeyframeGate()
    private(set) var statistics = RTMPPublisher.Statistics()

    /// The largest access unit a video message carries: 24 bits of length less the tag header.
    static let maximumFrameBytes = 0xFF_FFFF - 8

    init(messageStreamId: UInt32, syntax: FLVVideoTag.Syntax) {
        self.messageStreamId = messageStreamId
        self.syntax = syntax
    }

    /// The origin of the publish's timestamps: the first frame's time (video's decoding time, or
    /// an audio frame's time when audio comes first), set by the first call.
    mutating func origin(at time: Duration) -> Duration {
        let origin = self.origin ?? time
        self.origin = origin
        return origin
    }

    /// The messages for one access unit; empty when it is dropped: the connection is not
    /// `writable` (then everything up to the next IDR goes), or no IDR has come yet.
    ///
    /// - Throws: `MediaError.Code.valueOutOfRange` when the composition time does not fit SI24,
    ///   `MediaError.Code.rtmpMessageTooLarge` for an access unit over ``maximumFrameBytes``.
    mutating func messages(avcc: [UInt8], format: VideoFormatDescription, isKeyframe: Bool, decodeTime: Duration,
                           presentationTime: Duration, writable: Bool) throws(MediaError) -> [RTMPMessage] {
        if !writable {
            if gate.isOpen { statistics.skipsToKeyframe += 1 }
            gate.close()
        }
        guard writable, gate.admit(isKeyframe: isKeyframe) else {
            statistics.framesDropped += 1
            return []
        }
        let origin = self.origin ?? decodeTime
        self.origin = origin
        let decodeMilliseconds = Self.milliseconds(decodeTime - origin)
        let compositionMilliseconds = Self.milliseconds(presentationTime - origin) - decodeMilliseconds
        guard let composition = Int32(exactly: compositionMilliseconds), FLVVideoTag.compositionTimeRange.contains(composition) else {
            gate.close() // the frame is not sent: the frames that refer to it go too
            throw MediaError(.valueOutOfRange, field: "CompositionTime", "PTS − DTS = \(compositionMilliseconds) ms does not fit SI24")
        }
        let timestamp = max(lastTimestamp, UInt32(truncatingIfNeeded: max(decodeMilliseconds, 0)))
        var messages: [RTMPMessage] = []
        if format != self.format {
            self.format = format
            let header = FLVVideoTag.sequenceHeader(format, syntax: syntax)
            messages.append(RTMPMessage(type: .video, timestamp: timestamp, messageStreamId: messageStreamId, payload: try header.serialized()))
            statistics.sequenceHeaders += 1
        }
        guard avcc.count <= Self.maximumFrameBytes else {
            gate.close()
            throw MediaError(.rtmpMessageTooLarge, field: "message length", "an access unit of \(avcc.count) bytes does not fit an RTMP message")
        }
        let tag = FLVVideoTag(frameType: isKeyframe ? .keyframe : .interFrame,
                              packet: .codedFrames(data: avcc, compositionTime: composition), syntax: syntax, codec: format.codec)
        messages.append(RTMPMessage(type: .video, timestamp: timestamp, messageStreamId: messageStreamId, payload: try tag.serialized()))
        lastTimestamp = timestamp
        statistics.framesSent += 1
        return messages
    }

    /// Goes on over a new connection (a reconnection): the sequence header is sent again and
    /// the next frame sent is an IDR; timestamps go on from the last one.
    mutating func restart(messageStreamId: UInt32) {
        self.messageStreamId = messageStreamId
        format = nil
        gate.close()
        statistics.reconnects += 1
    }

    /// The end-of-sequence message at the last timestamp; nil when nothing was sent.
    func endOfSequence() -> RTMPMessage? {
        guard statistics.framesSent > 0,
              let payload = try? FLVVideoTag(frameType: .keyframe, packet: .endOfSequence, syntax: syntax,
                                             codec: format?.codec ?? .h264).serialized() else { return nil }
        return RTMPMessage(type: .video, timestamp: lastTimestamp, messageStreamId: messageStreamId, payload: payload)
    }

    /// `duration` in whole milliseconds, rounded to the nearest.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + (attoseconds + (attoseconds >= 0 ? 500_000_000_000_000 : -500_000_000_000_000)) / 1_000_000_000_000_000
    }
}
