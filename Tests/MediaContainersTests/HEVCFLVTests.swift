import H264
import MediaContainers
import H264TestSupport
import HEVC
import Testing

/// H.265 in FLV (Enhanced RTMP v2 `hvc1`): the tag bytes both ways, and Annex-B H.265 → FLV →
/// Annex-B on the shared streams. Neither Debian's FFmpeg 5.1 nor GStreamer 1.22 reads enhanced
/// FLV (FFmpeg added it in 6.1, GStreamer's flvdemux in 1.24), so the FLV is checked by this
/// reader and by the NAL units it gives back.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCFLVTests {
    /// The B-frame stream: 60 pictures at 30 fps, open GOPs (CRA), x265.
    static let bframes = "hevc/main_gop_bframes_cra.265"

    static func record(of stream: String) throws -> (HEVCDecoderConfigurationRecord, [HEVCAccessUnit]) {
        try HEVCDecoderConfigurationRecord.hvcc(fromAnnexB: try TestFixtures.data(stream), parameterSetsInBand: false)
    }

    /// The enhanced tag layout: `0x80 | FrameType << 4 | VideoPacketType`, `hvc1`, then the hvcC
    /// (SequenceStart, 0), SI24 + NAL units (CodedFrames, 1), NAL units (CodedFramesX, 3, for a
    /// composition time of 0) or nothing (SequenceEnd, 2); the same tags parse back, whatever
    /// syntax was asked for (legacy FLV has no H.265).
    @Test(arguments: FLVVideoTag.Syntax.allCases)
    func tagBytes(syntax: FLVVideoTag.Syntax) throws {
        let (record, samples) = try Self.record(of: "hevc/tiny_16x16.265")
        let hvcC = record.bytes
        let header = FLVVideoTag.sequenceHeader(.hevc(record), syntax: syntax)
        #expect(try header.serialized() == [0x90] + Array("hvc1".utf8) + hvcC)
        let frame = samples[1].data
        let coded = FLVVideoTag(frameType: .interFrame, packet: .codedFrames(data: frame, compositionTime: -40), syntax: syntax, codec: .hevc)
        #expect(try coded.serialized() == [0xA1] + Array("hvc1".utf8) + [0xFF, 0xFF, 0xD8] + frame)
        let codedX = FLVVideoTag(frameType: .keyframe, packet: .codedFrames(data: samples[0].data, compositionTime: 0), syntax: syntax,
                                 codec: .hevc)
        #expect(try codedX.serialized() == [0x93] + Array("hvc1".utf8) + samples[0].data)
        let end = FLVVideoTag(frameType: .keyframe, packet: .endOfSequence, syntax: syntax, codec: .hevc)
        #expect(try end.serialized() == [0x92] + Array("hvc1".utf8))
        for tag in [header, coded, codedX, end] {
            let parsed = try FLVVideoTag(parsing: try tag.serialized())
            #expect(parsed.codec == .hevc && parsed.syntax == .enhanced && parsed.packet == tag.packet && parsed.frameType == tag.frameType)
        }
        #expect(try HEVCDecoderConfigurationRecord(parsing: hvcC) == record)
    }

    /// Every shared stream through FLV and back: the hvcC once, one tag per picture with its
    /// IRAP flag as FrameType, and the same NAL units as the hvc1 HVCC conversion gives (the
    /// record's VPS, SPS and PPS before each IRAP picture, as `hevc_mp4toannexb`).
    @Test(arguments: TestFixtures.hevcStreams)
    func roundTrip(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let flv = try FLVConversion.flv(fromAnnexB: bytes, frameRate: nil, syntax: .legacy)
        let contents = try FLVReader.read(flv)
        let (record, samples) = try Self.record(of: "hevc/\(stream)")
        #expect(contents.skippedTags.isEmpty && contents.warnings.isEmpty, "\(contents.skippedTags) \(contents.warnings)")
        #expect(contents.frames.allSatisfy { $0.format?.codec == .hevc } && contents.formats.allSatisfy { $0.codec == .hevc })
        #expect(contents.formats == [.hevc(record)] && contents.formats.map(\.configurationRecordBytes) == [record.bytes])
        #expect(contents.frames.map(\.data) == samples.map(\.data))
        #expect(contents.frames.map(\.hevcAccessUnit?.nalUnitTypes) == samples.map(\.nalUnitTypes))
        #expect(contents.frames.map(\.isKeyframe) == samples.map(\.isIRAP))
        #expect(contents.endOfSequenceCount == 1)
        let back = try FLVConversion.annexB(fromFLV: flv)
        #expect(back.diagnostics.isEmpty, "\(back.diagnostics)")
        var expected: [UInt8] = []
        for sample in samples { expected += try AnnexB.fromHVCC(sample.data, lengthSize: 4, configuration: record) }
        #expect(back.bytes == expected)
    }

    /// `onMetaData` names the codec by its FourCC (`videocodecid` 0x68766331) and the size from
    /// the SPS; decoding times step by the VUI's frame rate, and presentation times are a
    /// permutation of the same steps shifted by the reordering delay (B-frames: some differ).
    @Test func metadataAndTimestamps() throws {
        let flv = try FLVConversion.flv(fromAnnexB: try TestFixtures.data(Self.bframes), frameRate: nil, syntax: .enhanced)
        // The first tag (after the 9-byte header and PreviousTagSize0) is the script data.
        try #require(flv.count > 24 && flv[13] == 18, "onMetaData first")
        let size = Int(flv[14]) << 16 | Int(flv[15]) << 8 | Int(flv[16])
        var reader = AMF0Reader(Array(flv[24..<24 + size]))
        let values = try reader.readAll()
        #expect(values.first == .string("onMetaData"))
        #expect(values.last?["videocodecid"] == .number(Double(0x6876_6331)))
        #expect(values.last?["width"] == .number(320) && values.last?["height"] == .number(180))
        let frames = try FLVReader.read(flv).frames
        #expect(frames.count == 60)
        let step = { (frames: Int) in Int64((Double(frames) * 1000 / 30).rounded()) }
        #expect(frames.map(\.decodeTime) == (0..<60).map(step))
        let delay = Int((Double(frames.map(\.presentationTime).min() ?? 0) * 30 / 1000).rounded())
        #expect(Set(frames.map(\.presentationTime)) == Set((delay..<delay + 60).map(step)))
        #expect(frames.contains { $0.compositionTime != Int32(step(delay)) }, "B-frames reorder")
        #expect(frames.allSatisfy { $0.compositionTime >= 0 })
    }

    /// A sequence header whose hvcC passes the check of its fixed part but whose arrays run past
    /// the tag: reported by the conversion (a skipped tag), and the frame after it too — it has
    /// no format, so it is skipped (`missingParameterSet`), and the file has no frames left.
    @Test func badHVCCArraysAreReported() throws {
        let (record, samples) = try Self.record(of: "hevc/tiny_16x16.265")
        var writer = FLVWriter()
        // The tag's bytes by hand: a `VideoFormatDescription` holds only an hvcC that parses.
        let tag = [0x90] + Array("hvc1".utf8) + Array(record.bytes.dropLast(3))
        var header: [UInt8] = []
        try FLVTagHeader(tagType: .video, dataSize: tag.count, timestamp: 0).append(to: &header)
        let size = header.count + tag.count
        let bytes = writer.bytes + header + tag + (0..<4).map { UInt8(truncatingIfNeeded: size >> (24 - 8 * $0)) }
        writer = FLVWriter()
        try writer.appendFrame(samples[0].data, isKeyframe: true, decodeTime: 0, presentationTime: 0, codec: .hevc)
        let back = try FLVConversion.annexB(fromFLV: bytes + writer.bytes.dropFirst(13))
        #expect(back.diagnostics.map(\.code) == [.truncated, .missingParameterSet, .missingParameterSet], "\(back.diagnostics)")
        #expect(back.bytes.isEmpty)
    }
}
