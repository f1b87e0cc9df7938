import AudioCodecs
import MediaCore
import RTP
import Testing

/// ``AudioRTPPacketizer`` then ``AudioRTPDepacketizer``, for each payload format: the same frames,
/// timestamps and presentation times come back; and how the depacketizer reads packets it did
/// not make (several access units, losses, bounds).
@Suite struct AudioRTPDepacketizerTests {
    /// Frames of growing sizes (1 … 3000 bytes), so that the large ones need fragments.
    static let frames: [[UInt8]] = [1, 7, 255, 256, 600, 1400, 3000].enumerated().map { index, size in
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
    }

    static let formats: [(String, AudioMediaDescription, UInt32)] = [
        ("mpeg4-generic", AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96), 1024),
        ("MP4A-LATM", AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96, latm: true), 1024),
        ("opus", AudioMediaDescription(format: .opus(), payloadType: 96), 960),
    ]

    @Test(arguments: [0, 1, 2], [1400, 300])
    func roundTripGivesTheSameFramesAndTimestamps(format: Int, mtu: Int) throws {
        let (_, media, step) = Self.formats[format]
        var packetizer = AudioRTPPacketizer(media: media, ssrc: 0x1234, maximumTransmissionUnit: mtu, sequenceNumber: 65_530)
        var packets: [[UInt8]] = []
        for (index, frame) in Self.frames.enumerated() {
            try packetizer.packetize(frame, rtpTimestamp: 0xFFFF_F000 &+ UInt32(index) * step) { packets.append($0) }
        }
        #expect(packets.allSatisfy { $0.count <= mtu } || media.payloadFormat == .opus)
        #expect(packets.count > Self.frames.count || mtu == 1400 || media.payloadFormat == .opus, "fragmented at \(mtu)")
        let events = AudioRTP.depacketize(packets, media: media)
        #expect(events.diagnostics == [] && events.losses == [])
        #expect(events.data == Self.frames)
        let expectedTimestamps: [UInt32] = (0..<Self.frames.count).map { (index: Int) -> UInt32 in 0xFFFF_F000 &+ UInt32(index) * step }
        #expect(events.timestamps == expectedTimestamps)
        let times: [Duration] = events.frames.map(\.accessUnit.presentationTime)
        let expectedTimes: [Duration] = (0..<Self.frames.count).map { (index: Int) -> Duration in
            Duration.seconds(1) * (index * Int(step)) / media.clockRate
        }
        #expect(times == expectedTimes)
        #expect(events.frames.allSatisfy { $0.endedByMarker && $0.accessUnit.audioFormat == media.format })
    }

    /// G.711 is split at the MTU, each packet's timestamp advanced by the samples before it; the
    /// depacketizer gives each packet as a frame.
    @Test func g711IsSplitAtTheMTUWithTimestampsAdvancingByBytes() throws {
        let media = AudioMediaDescription(format: .g711(.pcma), payloadType: 8)
        var packetizer = AudioRTPPacketizer(media: media, ssrc: 0x1234, maximumTransmissionUnit: 112)
        let frame = (0..<250).map { UInt8($0) }
        var packets: [[UInt8]] = []
        try packetizer.packetize(frame, rtpTimestamp: 8000) { packets.append($0) }
        #expect(packets.map(\.count) == [112, 112, 62])
        #expect(packets.map { $0[1] } == [8, 8, 0x88], "PT 8, the marker on the last")
        let events = AudioRTP.depacketize(packets, media: media)
        #expect(events.data == [Array(frame[0..<100]), Array(frame[100..<200]), Array(frame[200...])])
        #expect(events.timestamps == [8000, 8100, 8200])
        let times: [Duration] = [.zero, .microseconds(12_500), .milliseconds(25)]
        #expect(events.frames.map(\.accessUnit.presentationTime) == times)
    }

    /// RFC 3640 3.2.1: three AU headers in one packet; the access units are `samplesPerFrame` apart.
    @Test func severalAccessUnitsInOnePacketAreSamplesPerFrameApart() {
        let media = AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96)
        // AU-headers-length 48 bits; AU-size 2, 3, 1 (13 bits) with index / index-delta 0 (3 bits).
        let payload: [UInt8] = [0x00, 0x30, 0x00, 0x10, 0x00, 0x18, 0x00, 0x08, 1, 2, 3, 4, 5, 6]
        let events = AudioRTP.depacketize([AudioRTP.packet(payload, sequenceNumber: 1, timestamp: 100)], media: media)
        #expect(events.data == [[1, 2], [3, 4, 5], [6]])
        #expect(events.timestamps == [100, 1124, 2148])
    }

    /// A gap in sequence numbers is one `.loss` with its first number and count; a fragment in
    /// progress is dropped with it.
    @Test func aGapIsALossAndDropsTheFragmentInProgress() throws {
        let media = AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96)
        var packetizer = AudioRTPPacketizer(media: media, ssrc: 0x1234, maximumTransmissionUnit: 300)
        var packets: [[UInt8]] = []
        for (index, frame) in Self.frames.enumerated() {
            try packetizer.packetize(frame, rtpTimestamp: UInt32(index) * 1024) { packets.append($0) }
        }
        // Packets 0…4 carry frames 0…3 and the first fragment of frame 4 (600 bytes: 3 packets).
        packets.remove(at: 5)
        let events = AudioRTP.depacketize(packets, media: media)
        #expect(events.losses.map { [Int($0.firstSequenceNumber), $0.packetCount] } == [[5, 1]])
        #expect(events.losses.map(\.droppedPartialAccessUnit) == [true])
        #expect(events.data == Self.frames.enumerated().filter { $0.offset != 4 }.map(\.element))
        #expect(events.diagnostics.map(\.code) == [.incompleteFragment], "the last fragment, without its start")
    }

    /// A packet behind the last one is dropped as late; another payload type is dropped too.
    @Test func latePacketsAndOtherPayloadTypesAreDropped() {
        let media = AudioMediaDescription(format: .g711(.pcmu), payloadType: 0)
        let events = AudioRTP.depacketize([
            AudioRTP.packet([1], sequenceNumber: 10, timestamp: 0, payloadType: 0),
            AudioRTP.packet([2], sequenceNumber: 9, timestamp: 0, payloadType: 0),
            AudioRTP.packet([3], sequenceNumber: 11, timestamp: 1, payloadType: 8),
            AudioRTP.packet([4], sequenceNumber: 11, timestamp: 1, payloadType: 0),
        ], media: media)
        #expect(events.data == [[1], [4]])
        #expect(events.diagnostics.map(\.code) == [.latePacket, .unexpectedPayloadType])
    }

    /// A fragmented access unit above ``AudioRTPDepacketizer/maximumFrameSize`` is never
    /// gathered: one diagnostic, its fragments skipped to the marker, the next frame read.
    @Test func aFragmentedAccessUnitAbove64KiBIsDropped() {
        let media = AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96)
        // sizelength 13 cannot say more than 8191: use 32-bit sizes.
        var wide = media
        wide.payloadFormat = .mpeg4Generic(sizeLength: 32, indexLength: 0, indexDeltaLength: 0)
        let huge: [UInt8] = [0x00, 0x20, 0x00, 0x10, 0x00, 0x01]  // AU-size 65537 (32 bits)
        let events = AudioRTP.depacketize([
            AudioRTP.packet(huge + [1, 2, 3], sequenceNumber: 1, timestamp: 0, marker: false),
            AudioRTP.packet(huge + [4, 5, 6], sequenceNumber: 2, timestamp: 0, marker: true),
            AudioRTP.packet([0x00, 0x20, 0, 0, 0, 2, 7, 8], sequenceNumber: 3, timestamp: 1024),
        ], media: wide)
        #expect(events.diagnostics.map(\.code) == [.valueOutOfRange])
        #expect(events.data == [[7, 8]])
    }

    /// An AAC access unit whose size does not fit `sizelength` is refused, nothing written.
    @Test func anAccessUnitTooLargeForSizeLengthIsRefused() {
        var packetizer = AudioRTPPacketizer(media: AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96), ssrc: 1)
        var count = 0
        #expect(throws: MediaError.self) { try packetizer.packetize([UInt8](repeating: 0, count: 8192), rtpTimestamp: 0) { _ in count += 1 } }
        #expect(count == 0 && packetizer.sequenceNumber == 0)
    }

    /// RFC 6416 with `cpresent=1` and no SDP config: the first element carries its
    /// StreamMuxConfig (`useSameStreamMux` 0), whose format the frames then carry; the next
    /// element reuses it.
    @Test func latmInBandConfigGivesTheFramesTheirFormat() {
        var media = AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96, latm: true)
        media.payloadFormat = .latm(muxConfigPresent: true, streamMuxConfig: nil)
        media.format = AudioFormatDescription(codec: .aac, sampleRate: 48_000, channelCount: 2)
        var first = BitSink()
        first.write(0, 1)
        for byte in [0x40, 0x00, 0x23, 0x20, 0x3F] { first.write(byte, 8) }
        first.write(0b1100, 4)
        first.write(2, 8); first.write(0xA1A2, 16)
        var second = BitSink()
        second.write(1, 1); second.write(1, 8); second.write(0x55, 8)
        let events = AudioRTP.depacketize([AudioRTP.packet(first.bytes, sequenceNumber: 0, timestamp: 0),
                                           AudioRTP.packet(second.bytes, sequenceNumber: 1, timestamp: 1024)], media: media)
        #expect(events.data == [[0xA1, 0xA2], [0x55]] && events.diagnostics == [])
        #expect(events.frames.allSatisfy { $0.accessUnit.audioFormat == AudioRTP.aacFormat })
    }
}
