import AudioCodecs
import H264TestSupport
import MediaCore
import RTP

/// Builds audio RTP packets and reads what an ``AudioRTPDepacketizer`` makes of them.
enum AudioRTP {
    /// A packet: the 12-byte header (SSRC 0x1234) and `payload`.
    static func packet(_ payload: [UInt8], sequenceNumber: UInt16, timestamp: UInt32, marker: Bool = true,
                       payloadType: UInt8 = 96) -> [UInt8] {
        RTPHeader(marker: marker, payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: timestamp,
                  ssrc: 0x1234).bytes + payload
    }

    /// Every event of `packets` through a depacketizer for `media`, sorted by kind.
    static func depacketize(_ packets: [[UInt8]], media: AudioMediaDescription) -> Events {
        var depacketizer = AudioRTPDepacketizer(media: media)
        var events = Events()
        for packet in packets {
            depacketizer.append(packet: packet)
            while let event = depacketizer.next() {
                switch event {
                case .accessUnit(let unit): events.frames.append(unit)
                case .loss(let loss): events.losses.append(loss)
                case .diagnostic(let error): events.diagnostics.append(error)
                case .keyframeRequest: break
                }
            }
        }
        return events
    }

    /// What a depacketizer reported.
    struct Events {
        var frames: [RTPReceivedAccessUnit<CompressedFrame>] = []
        var losses: [RTPDepacketizer.Loss] = []
        var diagnostics: [MediaError] = []
        var data: [[UInt8]] { frames.map(\.accessUnit.data) }
        var timestamps: [UInt32] { frames.map(\.timestamp) }
    }

    /// The packets of an `.rtp` fixture: each after a 2-byte big-endian length (Fixtures/audio/README.md).
    static func fixturePackets(_ name: String) throws -> [[UInt8]] {
        let bytes = try TestFixtures.data("audio/" + name)
        var packets: [[UInt8]] = []
        var offset = 0
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            packets.append(Array(bytes[(offset + 2)..<(offset + 2 + length)]))
            offset += 2 + length
        }
        return packets
    }

    /// The raw access units of an ADTS file (ISO/IEC 14496-3 1.A.2): each frame without its
    /// 7-byte header (9 with CRC).
    static func adtsFrames(_ name: String) throws -> [[UInt8]] {
        try ADTSFrames.frames(TestFixtures.data("audio/" + name))
    }

    /// 48 kHz stereo AAC-LC (`AudioSpecificConfig` 11 90).
    static let aacFormat = AudioSpecificConfig(samplingFrequency: 48_000, channelConfiguration: 2).formatDescription
}
