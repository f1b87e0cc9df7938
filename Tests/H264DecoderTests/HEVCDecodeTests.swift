import H264
import H264Decoder
import H264TestSupport
import HEVC
import Testing

/// H.265 through the same `DecoderSession`: every shared HEVC stream decodes to FFmpeg's frames
/// (count, order, cropping and per-frame MD5 of `ffmpeg -f framemd5`, computed at test time),
/// the codec chosen from the stream, the access unit type or the `hvcC`.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCDecodeTests {
    /// The frames of an Annex-B stream decoded by `AnnexBDecoder` fed `chunkSize` bytes at a time.
    static func decodeAnnexB(_ bytes: [UInt8], chunkSize: Int = 1 << 16,
                             configuration: DecoderConfiguration = DecoderConfiguration(threads: .count(1))) throws
        -> (digests: [FrameDigest], decoder: AnnexBDecoder) {
        let digests = Locked<[FrameDigest]>([])
        let session = try DecoderSession(configuration: configuration) { frame in
            digests.withLock { $0.append(FrameDigest(size: frame.packedByteCount, md5: frame.md5())) }
        }
        var decoder = AnnexBDecoder(session: session)
        var start = 0
        while start < bytes.count {
            try decoder.append(bytes[start..<min(bytes.count, start + chunkSize)])
            start += chunkSize
        }
        try decoder.finish()
        session.invalidate()
        return (digests.withLock { $0 }, decoder)
    }

    @Test(arguments: TestFixtures.hevcStreams)
    func annexBDecodesLikeFFmpeg(_ stream: String) throws {
        let path = try TestFixtures.path("hevc/\(stream)")
        let expected = try DecoderTestSupport.ffmpegFrames(path: path)
        let (digests, decoder) = try Self.decodeAnnexB(TestFixtures.data("hevc/\(stream)"))
        #expect(decoder.codec == .hevc)
        #expect(decoder.session.codec == .hevc)
        #expect(!expected.isEmpty)
        #expect(digests.count == expected.count, "\(stream): \(digests.count) frames, FFmpeg \(expected.count)")
        let firstDifference = zip(digests, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstDifference == nil, "\(stream): frame \(firstDifference?.offset ?? -1) differs from FFmpeg's")
    }

    /// The codec is told from the first bytes even when they arrive one at a time, and an H.264
    /// stream still goes to the H.264 reader.
    @Test func codecToldFromTinyChunks() throws {
        let hevc = try TestFixtures.data("hevc/tiny_16x16.265")
        let whole = try Self.decodeAnnexB(hevc)
        let byteByByte = try Self.decodeAnnexB(hevc, chunkSize: 1)
        #expect(byteByByte.decoder.codec == .hevc)
        #expect(byteByByte.digests == whole.digests)
        #expect(!whole.digests.isEmpty)

        let h264 = try Self.decodeAnnexB(TestFixtures.data("conformance/BA1_FT_C.264"), chunkSize: 7)
        #expect(h264.decoder.codec == .h264)
        #expect(h264.decoder.session.codec == .h264)
        #expect(h264.digests.count == h264.decoder.accessUnitCount)
    }

    /// `HEVCAccessUnit`s choose the codec; HVCC samples without in-band parameter sets decode
    /// with the `hvcC` given at creation, to the same frames.
    @Test func accessUnitsAndHVCCSamplesWithRecord() throws {
        let bytes = try TestFixtures.data("hevc/main_gop_bframes_cra.265")
        let units = HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes)
        let reference = try Self.decodeAnnexB(bytes).digests

        let collected = Locked<[FrameDigest]>([])
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1))) { frame in
            collected.withLock { $0.append(FrameDigest(size: frame.packedByteCount, md5: frame.md5())) }
        }
        #expect(session.codec == nil)
        for (i, unit) in units.enumerated() {
            try session.decode(unit, presentationTimeStamp: .milliseconds(i * 40))
        }
        try session.waitForAsynchronousFrames()
        #expect(session.codec == .hevc)
        #expect(collected.withLock { $0 } == reference)
        let h264Unit = AccessUnit(data: [0, 0, 0, 2, 0x09, 0xF0], nalUnitTypes: [.accessUnitDelimiter], streamOffset: 0, byteCount: 6)
        #expect(throws: MediaError.self) { try session.decode(h264Unit) }
        session.invalidate()

        let parameterSetTypes: Set<HEVCNALUnitType> = [.videoParameterSet, .sequenceParameterSet, .pictureParameterSet]
        let parameterSets = units.flatMap { unit in unit.nalUnits.filter { parameterSetTypes.contains(HEVCNALUnitHeader($0[$0.startIndex], $0[$0.startIndex + 1]).nalUnitType) } }
        let record = try HEVCDecoderConfigurationRecord(parameterSets: parameterSets.map { Array($0) })
        let fromRecord = Locked<[FrameDigest]>([])
        let withRecord = try DecoderSession(hevcFormatDescription: record, configuration: DecoderConfiguration(threads: .count(1))) { frame in
            fromRecord.withLock { $0.append(FrameDigest(size: frame.packedByteCount, md5: frame.md5())) }
        }
        #expect(withRecord.hevcFormatDescription == record)
        #expect(withRecord.formatDescription == nil)
        #expect(withRecord.canAccept(record))
        for (i, unit) in units.enumerated() {
            let samples = unit.nalUnits.filter { !parameterSetTypes.contains(HEVCNALUnitHeader($0[$0.startIndex], $0[$0.startIndex + 1]).nalUnitType) }
            #expect(samples.count < unit.nalUnits.count || !unit.isIRAP)
            try withRecord.decode(hvcc: AVCC.data(nalUnits: samples.map { Array($0) }), presentationTimeStamp: .milliseconds(i * 40))
        }
        try withRecord.waitForAsynchronousFrames()
        #expect(fromRecord.withLock { $0 } == reference)
        withRecord.invalidate()
    }

    /// A configuration that names one codec refuses a format description of the other.
    @Test func codecMismatchIsAConfigurationError() throws {
        let bytes = try TestFixtures.data("hevc/tiny_16x16.265")
        let units = HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes)
        let sets = units[0].nalUnits.map { Array($0) }.filter { HEVCNALUnitHeader($0[0], $0[1]).nalUnitType.rawValue >= 32 && HEVCNALUnitHeader($0[0], $0[1]).nalUnitType.rawValue <= 34 }
        let record = try HEVCDecoderConfigurationRecord(parameterSets: sets)
        var h264Only = DecoderConfiguration()
        h264Only.codec = .h264
        #expect(throws: MediaError.self) { try DecoderSession(hevcFormatDescription: record, configuration: h264Only) }
        let session = try DecoderSession(configuration: h264Only)
        #expect(!session.canAccept(record))
        #expect(throws: MediaError.self) { try session.decode(units[0]) }
    }
}
