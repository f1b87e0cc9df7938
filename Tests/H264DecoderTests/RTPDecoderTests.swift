import Foundation
import H264
import H264Decoder
import H264TestSupport
import Testing
import RTP

/// `RTPDecoder`: access units from `RTPPacketizer` → `RTPDepacketizer` (or
/// `RTPZeroCopyDepacketizer`, its views copied once into libavcodec's input) decoded from the
/// first IDR on, frame for frame FFmpeg's, stamped with their RTP time across the 32-bit wrap.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct RTPDecoderTests {
    static let stream = "conformance/MIDR_MW_D.264"

    @Test("joining mid-stream: skipped up to the next IDR, then FFmpeg's frames, timed by RTP across the wrap",
          arguments: [false, true])
    func joinsAtAnIDRAndUnwrapsTimestamps(zeroCopy: Bool) throws {
        let path = try TestFixtures.path(Self.stream)
        var receiver = AccessUnitReceiver()
        let units = (receiver.receive(try TestFixtures.data(Self.stream)) + receiver.finish()).compactMap { event -> AccessUnit? in
            if case .accessUnit(let unit) = event { return unit }
            return nil
        }
        // The receiver joins after the first access unit (an IDR): the pictures up to the next
        // IDR cannot be decoded.
        let firstIDR = try #require(units.indices.dropFirst(1).first { units[$0].isIDR })
        #expect(firstIDR > 1)
        // 25 fps, the timestamps wrapping past 2³² three pictures after the first decoded one.
        let ticks = UInt32(3_600)
        var packetizer = RTPPacketizer(configuration: .init(initialTimestamp: UInt32.max - UInt32(firstIDR - 1 + 3) * ticks + 1))
        var depacketizer = RTPDepacketizer()
        var zeroCopyDepacketizer = RTPZeroCopyDepacketizer()
        let out = Locked<[DecodedFrame]>([])
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1))) { f in out.withLock { $0.append(f) } }
        var decoder = RTPDecoder(session: session)
        for (index, unit) in units.enumerated().dropFirst() {
            try packetizer.packetize(avcc: unit.data, presentationTime: .milliseconds(40 * (index - 1)),
                                     formatDescription: unit.formatDescription) { packet in
                if zeroCopy {
                    zeroCopyDepacketizer.append(packet: packet.bytes())
                } else {
                    packet.bytes().withUnsafeBytes { depacketizer.append(packet: $0) }
                }
            }
            try drain()
        }
        depacketizer.finish()
        zeroCopyDepacketizer.finish()
        try drain()
        func drain() throws {
            while let event = depacketizer.next() {
                if case .accessUnit(let received) = event { try decoder.decode(received) }
            }
            while let event = zeroCopyDepacketizer.next() {
                if case .accessUnit(let received) = event { try decoder.decode(received) }
            }
        }
        try decoder.finish()
        let frames = out.withLock { $0 }
        session.invalidate()

        #expect(decoder.skippedAccessUnitCount == firstIDR - 1)
        #expect(decoder.accessUnitCount == units.count - firstIDR)
        #expect(decoder.frameDuration == nil, "the stream has no VUI timing")
        let expected = try DecoderTestSupport.ffmpegFrames(path: path)
        #expect(frames.map { FrameDigest(size: $0.packedByteCount, md5: $0.md5()) } == Array(expected.dropFirst(firstIDR)))
        #expect(frames.map(\.presentationTimeStamp) == frames.indices.map { .milliseconds(40 * $0) })
    }
}
