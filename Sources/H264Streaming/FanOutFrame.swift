import H264
import NIOCore
import RTP

/// One frame as a ``Broadcaster`` hands it to its viewers: the frame, and each wire form made
/// once for all of them — its RTP packets when RTSP viewers play the stream, its Annex-B bytes
/// when raw viewers do. Immutable and shared by every viewer's write (a class, so the write
/// carries one reference however many forms it holds).
final class FanOutFrame: Sendable {
    let frame: LiveFrame
    /// The stream's RTP packets of the frame, of its track (video, or audio: one SSRC and
    /// sequence for each track of the stream), nil when no RTSP viewer was playing when it was
    /// broadcast (or, for audio, when the mount has no audio track).
    let rtp: RTPFramePackets?
    /// The Annex-B bytes: the producer's, or made once when a raw viewer was playing; nil: a raw
    /// viewer's connection converts ``frame`` itself (a kept frame from before it joined).
    let annexB: ByteBuffer?

    init(frame: LiveFrame, rtp: RTPFramePackets?, annexB: ByteBuffer?) {
        self.frame = frame
        self.rtp = rtp
        self.annexB = annexB
    }

    /// The bytes a viewer of this frame keeps in flight: the largest form it is written.
    var wireByteCount: Int { max(rtp?.interleaved.readableBytes ?? 0, annexB?.readableBytes ?? 0, frame.avcc.count) }

    /// The Annex-B bytes for a raw viewer: ``annexB``, else the frame converted.
    func annexBBytes(allocator: ByteBufferAllocator) throws -> ByteBuffer {
        if let annexB { return annexB }
        return try frame.annexBBytes(allocator: allocator)
    }
}

/// The RTP packets of one frame, made once per stream: every packet after the 4-byte header of
/// RTSP interleaving (`$`, ``channel`` — 0 for video, 2 for audio —, length; RFC 2326 §10.12),
/// in one buffer. A viewer interleaved on that channel is written the whole buffer (no copy: the buffer's storage is
/// shared); one on another channel is written its own 4-byte header before each packet's slice;
/// a UDP viewer each packet's slice as a datagram.
struct RTPFramePackets: Sendable {
    /// The packets, each after `$`, `0` and its 16-bit length.
    let interleaved: ByteBuffer
    /// How many packets.
    let packetCount: UInt32
    /// Their payload octets (the RTP headers excluded), for sender reports.
    let payloadOctets: UInt32
    /// The interleaved channel of the 4-byte headers in ``interleaved``.
    var channel: UInt8 = 0

    /// Calls `body` with each packet's bytes (a slice of ``interleaved``, no copy).
    func forEachPacket(_ body: (ByteBuffer) -> Void) {
        var rest = interleaved
        while rest.readableBytes >= 4, let length = rest.getInteger(at: rest.readerIndex + 2, as: UInt16.self) {
            rest.moveReaderIndex(forwardBy: 4)
            guard let packet = rest.readSlice(length: Int(length)) else { return }
            body(packet)
        }
    }
}

/// The RTP side of a stream with RTSP viewers: one packetizer (one SSRC, one sequence of
/// numbers), a clock mapping the frames' presentation times to RTP timestamps from the stream's
/// start, and the counts a sender report gives. Sans-I/O; the ``Broadcaster`` holds it under
/// its lock, so frames are packetized in the order they are broadcast.
struct StreamPacketizer: Sendable {
    private var packetizer: VideoRTPPacketizer
    private var clock: RTSPPlayClock
    /// The audio track's packetizer (its own SSRC and sequence), once a mount has audio.
    private var audio: AudioRTPPacketizer?
    /// The audio track's first RTP timestamp (random, RFC 3550 clause 5.1).
    private let audioInitialTimestamp = UInt32.random(in: 0...UInt32.max)
    /// The stamp of the last audio frame packetized.
    private var lastAudioStamp: Duration?

    /// Whether the stream has an audio track (``enableAudio(_:)``).
    var hasAudio: Bool { audio != nil }

    /// The interleaved channel of the audio track's packets.
    static let audioChannel: UInt8 = 2

    /// A stream whose packets are at most `maximumTransmissionUnit` bytes (counted as for UDP
    /// over IPv4), its clock started now.
    init(maximumTransmissionUnit: Int, start: ContinuousClock.Instant = .now) {
        packetizer = VideoRTPPacketizer(configuration: .init(maximumTransmissionUnit: maximumTransmissionUnit))
        clock = RTSPPlayClock(playStart: start)
    }

    /// The stream's synchronization source (the SSRC of every packet, and of SETUP's answer).
    var ssrc: UInt32 { packetizer.configuration.ssrc }

    /// The RTP timestamp for `now` (a sender report's): the last frame's, plus the time since it came.
    func rtpTimestamp(at now: ContinuousClock.Instant) -> UInt32 {
        packetizer.timestamp(for: clock.time(at: now))
    }

    /// Makes the audio track's packets from now on, as `media` describes them (the first
    /// mount's; later calls keep it); returns the track's SSRC.
    mutating func enableAudio(_ media: AudioMediaDescription) -> UInt32 {
        if audio == nil {
            audio = AudioRTPPacketizer(media: media, ssrc: UInt32.random(in: 1...UInt32.max),
                                       maximumTransmissionUnit: packetizer.configuration.maximumTransmissionUnit)
        }
        return audio?.ssrc ?? 0
    }

    /// The audio track's SSRC and RTP timestamp for `now` (a sender report's, mapping the same
    /// wall clock as the video track's); nil without audio.
    func audioRTPClock(at now: ContinuousClock.Instant) -> (ssrc: UInt32, timestamp: UInt32)? {
        audio.map { ($0.ssrc, audioTimestamp(for: clock.time(at: now), clockRate: $0.media.clockRate)) }
    }

    /// The audio RTP timestamp of `time` (on the stream's clock) at `clockRate`.
    private func audioTimestamp(for time: Duration, clockRate: Int) -> UInt32 {
        let (seconds, attoseconds) = time.components
        let ticks = seconds &* Int64(clockRate) &+ (attoseconds / 1_000_000_000) * Int64(clockRate) / 1_000_000_000
        return audioInitialTimestamp &+ UInt32(truncatingIfNeeded: ticks)
    }

    /// The audio track's packets of `frame`, stamped from its presentation time on the stream's
    /// clock (the one video's are), in one buffer interleaved on channel 2; nil for a frame that
    /// does not come after the last one (a source that re-timed its audio, as the RTSP client
    /// does when a camera's first sender reports line the tracks up): players refuse audio
    /// that steps back, and the MP4 recorder drops it the same way.
    mutating func packetizeAudio(_ frame: LiveFrame, allocator: ByteBufferAllocator) throws(MediaError) -> RTPFramePackets? {
        guard audio != nil else { throw MediaError(.unsupported, field: "audio", "an audio frame on a mount without audio") }
        let time = clock.stamp(presentationTime: frame.presentationTime, arrival: .now)
        if let lastAudioStamp, time <= lastAudioStamp { return nil }
        lastAudioStamp = time
        let timestamp = audioTimestamp(for: time, clockRate: audio!.media.clockRate)
        var buffer = allocator.buffer(capacity: frame.avcc.count + frame.avcc.count / 64 + 64)
        var packets: UInt32 = 0, octets: UInt32 = 0
        try audio!.packetize(frame.avcc, rtpTimestamp: timestamp) { packet in
            buffer.writeInteger(UInt8(ascii: "$"))
            buffer.writeInteger(Self.audioChannel)
            buffer.writeInteger(UInt16(truncatingIfNeeded: packet.count))
            buffer.writeBytes(packet)
            packets &+= 1
            octets &+= UInt32(truncatingIfNeeded: max(0, packet.count - RTPHeader.fixedSize))
        }
        return RTPFramePackets(interleaved: buffer, packetCount: packets, payloadOctets: octets, channel: Self.audioChannel)
    }

    /// The packets of `frame`, stamped from its presentation time (else its arrival), in one buffer.
    mutating func packetize(_ frame: LiveFrame, allocator: ByteBufferAllocator) throws(MediaError) -> RTPFramePackets {
        guard let format = frame.format else { throw MediaError(.unsupported, field: "format", "an audio frame on the video track") }
        let time = clock.stamp(presentationTime: frame.presentationTime, arrival: .now)
        var buffer = allocator.buffer(capacity: frame.avcc.count + frame.avcc.count / 64 + 64)
        var packets: UInt32 = 0, octets: UInt32 = 0
        try packetizer.packetize(avcc: frame.avcc, presentationTime: time, format: format) { packet in
            buffer.writeInteger(UInt8(ascii: "$"))
            buffer.writeInteger(UInt8(0))
            buffer.writeInteger(UInt16(truncatingIfNeeded: packet.byteCount))
            buffer.writeBytes(packet.prefix)
            buffer.writeBytes(packet.payload)
            packets &+= 1
            octets &+= UInt32(truncatingIfNeeded: packet.byteCount - RTPHeader.fixedSize)
        }
        return RTPFramePackets(interleaved: buffer, packetCount: packets, payloadOctets: octets)
    }
}
