import AudioCodecs
import H264TestSupport
import MediaCore
import RTP

/// The malformed-input catalogue's audio rows: AAC configurations (ISO/IEC 14496-3 1.6.2.1,
/// 1.7.3) and RTP payloads (RFC 3640, RFC 6416), each with its code and field.
extension MalformedInputTests {
    /// The first diagnostic a depacketizer for `media` gives for `payload` in one packet, thrown.
    static func firstDiagnostic(_ payload: [UInt8], media: AudioMediaDescription) throws {
        var depacketizer = AudioRTPDepacketizer(media: media)
        depacketizer.append(packet: RTPHeader(marker: true, payloadType: media.payloadType, sequenceNumber: 0, timestamp: 0, ssrc: 1).bytes
            + payload)
        while let event = depacketizer.next() {
            if case .diagnostic(let error) = event { throw error }
        }
    }

    static let audio: [Case] = [
        Case("AudioSpecificConfig: one byte, cut inside samplingFrequencyIndex", .truncated, field: "samplingFrequencyIndex") {
            _ = try AudioSpecificConfig([0x11])
        },
        Case("AudioSpecificConfig: explicit frequency index 15 cut inside samplingFrequency", .truncated, field: "samplingFrequency") {
            _ = try AudioSpecificConfig([0x17, 0x80, 0x00])
        },
        Case("StreamMuxConfig: cut inside its AudioSpecificConfig", .truncated, field: "channelConfiguration") {
            _ = try StreamMuxConfig([0x40, 0x00, 0x23])
        },
        Case("AudioMuxElement: cpresent=0 and no StreamMuxConfig (mediamtx#3590)", .invalidConfigurationRecord, field: "StreamMuxConfig") {
            _ = try AudioMuxElement([0x02, 0x01, 0x02], muxConfigPresent: false, streamMuxConfig: nil)
        },
        Case("AudioMuxElement: PayloadLengthInfo past the element", .lengthPastEnd, field: "PayloadLengthInfo") {
            _ = try AudioMuxElement([0xFF, 0x10, 0x01], muxConfigPresent: false,
                                    streamMuxConfig: StreamMuxConfig(audioSpecificConfig: AudioSpecificConfig(samplingFrequency: 48_000, channelConfiguration: 2)))
        },
        Case("RFC 3640: AU header section past the packet (go2rtc PR #2513)", .lengthPastEnd, field: "AU-headers-length") {
            try firstDiagnostic([0x00, 0x40, 0x00, 0x10], media: AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96))
        },
        Case("RFC 3640: AU-size past the packet", .lengthPastEnd, field: "AU-size") {
            try firstDiagnostic([0x00, 0x20, 0x00, 0x10, 0x00, 0x18, 1, 2],
                                media: AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96))
        },
        Case("RFC 6416: LATM packet with no config known", .invalidConfigurationRecord, field: "StreamMuxConfig") {
            var media = AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96, latm: true)
            media.payloadFormat = .latm(muxConfigPresent: false, streamMuxConfig: nil)
            try firstDiagnostic([0x01, 0x00], media: media)
        },
    ]
}
