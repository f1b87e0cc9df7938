public import MediaCore
import AudioCodecs

/// Turns an audio track's codec frames into RTP packets (12-byte header, the track's payload
/// type, sequence numbers going on from one frame to the next, the marker bit on the last
/// packet of each frame), in the payload format its description names:
///
/// - `mpeg4-generic` AAC (RFC 3640 section 3.2): one access unit per packet after a 16-bit
///   `AU-headers-length` and one AU header (`AU-size`, `AU-Index` 0); an access unit larger
///   than the MTU is fragmented, every fragment's AU header carrying the whole size (section
///   3.2.3).
/// - `MP4A-LATM` (RFC 6416, `cpresent=0`): `PayloadLengthInfo()` then the access unit, one
///   `AudioMuxElement`, fragmented at the MTU.
/// - PCMU / PCMA (RFC 3551): the samples, split at the MTU, each packet's timestamp advanced by
///   the samples before it.
/// - Opus (RFC 7587): the packet, whatever its size.
public struct AudioRTPPacketizer: Sendable {
    /// The track's description: payload type and format.
    public let media: AudioMediaDescription
    /// `SSRC` of the packets.
    public var ssrc: UInt32
    /// The largest packet written, header included (at least 32).
    public let maximumTransmissionUnit: Int
    /// The sequence number of the next packet.
    public var sequenceNumber: UInt16

    /// A packetizer for the track `media` describes.
    ///
    /// - Parameters:
    ///   - media: the track's `m=audio` section.
    ///   - ssrc: `SSRC` of the packets.
    ///   - maximumTransmissionUnit: the largest packet, header included (raised to 32 if below).
    ///   - sequenceNumber: the first packet's sequence number.
    public init(media: AudioMediaDescription, ssrc: UInt32, maximumTransmissionUnit: Int = 1400, sequenceNumber: UInt16 = 0) {
        self.media = media
        self.ssrc = ssrc
        self.maximumTransmissionUnit = max(32, maximumTransmissionUnit)
        self.sequenceNumber = sequenceNumber
    }

    /// Writes the packets of one frame, in order, through `emit`. An empty frame writes nothing.
    ///
    /// - Parameters:
    ///   - frame: the codec frame (AAC: one raw access unit, no ADTS header).
    ///   - rtpTimestamp: its timestamp in the track's clock.
    ///   - emit: called with each complete packet.
    /// - Throws: `valueOutOfRange` (field `AU-size`) for an AAC access unit whose size does not
    ///   fit the description's `sizelength`; nothing is written then.
    public mutating func packetize(_ frame: [UInt8], rtpTimestamp: UInt32, _ emit: ([UInt8]) -> Void) throws(MediaError) {
        guard !frame.isEmpty else { return }
        let room = maximumTransmissionUnit - RTPHeader.fixedSize
        switch media.payloadFormat {
        case .mpeg4Generic(let sizeLength, let indexLength, _):
            guard sizeLength > 0, sizeLength < 63, frame.count < 1 << sizeLength else {
                throw MediaError(.valueOutOfRange, field: "AU-size", "an access unit of \(frame.count) bytes in \(sizeLength) bits")
            }
            let bits = sizeLength + indexLength
            var sink = BitSink()
            sink.write(bits >> 8 & 0xFF, 8)
            sink.write(bits & 0xFF, 8)
            sink.write(frame.count, sizeLength)
            sink.write(0, indexLength)
            let prefix = sink.bytes
            send(frame, prefix: prefix, chunk: max(1, room - prefix.count), timestamp: { _ in rtpTimestamp }, emit)
        case .latm:
            send(AudioMuxElement.payloadLengthInfo(frame.count) + frame, prefix: [], chunk: room,
                 timestamp: { _ in rtpTimestamp }, emit)
        case .g711:
            let channels = max(1, media.channelCount)
            send(frame, prefix: [], chunk: max(channels, room / channels * channels),
                 timestamp: { rtpTimestamp &+ UInt32(truncatingIfNeeded: $0 / channels) }, emit)
        case .opus:
            send(frame, prefix: [], chunk: frame.count, timestamp: { _ in rtpTimestamp }, emit)
        }
    }

    /// Sends `data` in pieces of `chunk` bytes, each after `prefix`, the marker on the last;
    /// `timestamp` gives a piece's timestamp from its offset in `data`.
    private mutating func send(_ data: [UInt8], prefix: [UInt8], chunk: Int, timestamp: (Int) -> UInt32,
                               _ emit: ([UInt8]) -> Void) {
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + chunk)
            let header = RTPHeader(marker: end == data.count, payloadType: media.payloadType, sequenceNumber: sequenceNumber,
                                   timestamp: timestamp(offset), ssrc: ssrc)
            var packet = header.bytes
            packet.reserveCapacity(RTPHeader.fixedSize + prefix.count + end - offset)
            packet += prefix
            packet += data[offset..<end]
            emit(packet)
            sequenceNumber &+= 1
            offset = end
        }
    }
}
