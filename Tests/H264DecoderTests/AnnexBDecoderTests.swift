import H264
import H264Decoder
import H264TestSupport
import Testing

@Suite(.ownThread) struct AnnexBDecoderTests {
    @Test("chunks of any size decode to the same frames as the whole stream, untimed frames spaced by the frame duration")
    func chunkIndependence() throws {
        let bytes = try TestFixtures.data("conformance/CANL1_TOSHIBA_G.264")
        let whole = try DecoderTestSupport.decode(annexB: bytes)
        whole.session.invalidate()
        var random = SplitMix64(seed: 12)
        let out = Locked<[DecodedFrame]>([])
        let session = try DecoderSession { f in out.withLock { $0.append(f) } }
        var decoder = AnnexBDecoder(session: session, frameDuration: .milliseconds(40))
        var position = 0
        while position < bytes.count {
            let size = 1 + Int(random.next() % 3000)
            try decoder.append(bytes[position..<min(position + size, bytes.count)])
            position += size
        }
        try decoder.finish()
        session.invalidate()
        let frames = out.withLock { $0 }
        #expect(frames.map { FrameDigest(size: $0.packedByteCount, md5: $0.md5()) } == whole.digests)
        #expect(frames.map(\.presentationTimeStamp) == (0..<frames.count).map { .milliseconds(40 * $0) })
        #expect(decoder.accessUnitCount == frames.count)
    }

    @Test("a time stamp given with a chunk belongs to the access unit that begins in it")
    func timingCarriedThrough() throws {
        let bytes = try TestFixtures.data("conformance/BA_MW_D.264")
        let units = AccessUnitAssembler.accessUnits(inAnnexB: bytes)
        let out = Locked<[DecodedFrame]>([])
        let session = try DecoderSession { f in out.withLock { $0.append(f) } }
        var decoder = AnnexBDecoder(session: session)
        for (i, unit) in units.enumerated() {
            // Each access unit in two reads; only the first carries its time (i × 7 ms).
            let middle = unit.streamOffset + unit.byteCount / 2
            try decoder.append(bytes[unit.streamOffset..<middle], presentationTimeStamp: .milliseconds(7 * i))
            try decoder.append(bytes[middle..<(unit.streamOffset + unit.byteCount)])
        }
        try decoder.finish()
        session.invalidate()
        let frames = out.withLock { $0 }
        #expect(frames.count == units.count)
        #expect(frames.map(\.presentationTimeStamp) == (0..<units.count).map { .milliseconds(7 * $0) })
    }
}
