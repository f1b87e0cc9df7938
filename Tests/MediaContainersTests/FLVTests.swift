import H264
import H264TestSupport
import Testing
import HEVC
import MediaContainers

/// FLV tags and files (FLV specification annex E; Enhanced RTMP v2): byte vectors built here
/// from those syntax tables, round trips through ``FLVWriter`` and ``FLVReader`` on the B-frame
/// fixture, and the malformed-input catalogue of the FLV reader.
@Suite(.ownThread) struct FLVTests {
    static let fixture = "flv/x264_bframes_320x192_9f.264"

    /// The fixture's access units (decoding order) and their format.
    static func fixtureUnits() throws -> (units: [AccessUnit], format: FormatDescription) {
        let units = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data(fixture)).filter(\.hasPicture)
        let format = try #require(units.first?.formatDescription)
        return (units, format)
    }

    // MARK: - Byte vectors

    /// Legacy NALU tag: `FrameType 2 | CodecID 7` = 0x27, `AVCPacketType` 1, `CompositionTime`
    /// −2 as SI24 = FF FF FE, then the AVCC data as it is.
    @Test func legacyCodedFramesBytes() throws {
        let data: [UInt8] = [0, 0, 0, 2, 0x41, 0x9A]
        let tag = FLVVideoTag(frameType: .interFrame, packet: .codedFrames(data: data, compositionTime: -2))
        let bytes = try tag.serialized()
        #expect(bytes == [0x27, 0x01, 0xFF, 0xFF, 0xFE] + data)
        #expect(try FLVVideoTag(parsing: bytes) == tag)
    }

    /// Enhanced RTMP: `IsExHeader | FrameType 1 | CodedFrames (1)` = 0x91, `avc1`, SI24 40;
    /// with a composition time of 0 the writer uses `CodedFramesX` (3): 0x93 and no time field.
    @Test func enhancedCodedFramesBytes() throws {
        let data: [UInt8] = [0, 0, 0, 2, 0x65, 0x88]
        let avc1: [UInt8] = [0x61, 0x76, 0x63, 0x31]
        let withTime = FLVVideoTag(frameType: .keyframe, packet: .codedFrames(data: data, compositionTime: 40), syntax: .enhanced)
        #expect(try withTime.serialized() == [0x91] + avc1 + [0, 0, 40] + data)
        let zero = FLVVideoTag(frameType: .interFrame, packet: .codedFrames(data: data, compositionTime: 0), syntax: .enhanced)
        #expect(try zero.serialized() == [0xA3] + avc1 + data)
        #expect(try FLVVideoTag(parsing: try withTime.serialized()) == withTime)
        #expect(try FLVVideoTag(parsing: try zero.serialized()) == zero)
        let end = FLVVideoTag(frameType: .keyframe, packet: .endOfSequence, syntax: .enhanced)
        #expect(try end.serialized() == [0x92] + avc1)
        #expect(try FLVVideoTag(frameType: .keyframe, packet: .endOfSequence).serialized() == [0x17, 2, 0, 0, 0])
    }

    /// The sequence header carries the avcC after `17 00 00 00 00` (legacy) or `90 avc1` (enhanced).
    @Test(arguments: FLVVideoTag.Syntax.allCases)
    func sequenceHeaderCarriesTheAvcC(syntax: FLVVideoTag.Syntax) throws {
        let format = try Self.fixtureUnits().format
        let tag = FLVVideoTag(frameType: .keyframe, packet: .sequenceHeader(.h264(format)), syntax: syntax)
        let bytes = try tag.serialized()
        let prefix: [UInt8] = syntax == .legacy ? [0x17, 0, 0, 0, 0] : [0x90, 0x61, 0x76, 0x63, 0x31]
        #expect(bytes == prefix + format.avcC)
        #expect(try FLVVideoTag(parsing: bytes) == tag)
    }

    /// File header `FLV 1`, flags 1 (video), DataOffset 9, PreviousTagSize0 0; each tag's header
    /// holds its data size and timestamp (extended byte last) and is followed by 11 + size.
    @Test func fileLayout() throws {
        var writer = FLVWriter()
        #expect(writer.bytes == [0x46, 0x4C, 0x56, 1, 1, 0, 0, 0, 9, 0, 0, 0, 0])
        try writer.appendEndOfSequence(timestamp: 0x0102_0304)
        let tag = Array(writer.bytes[13...])
        #expect(tag == [9, 0, 0, 5, 0x02, 0x03, 0x04, 0x01, 0, 0, 0] + [0x17, 2, 0, 0, 0] + [0, 0, 0, 16])
        let header = try FLVTagHeader(parsing: tag)
        #expect(header.tagType == .video && header.dataSize == 5 && header.timestamp == 0x0102_0304)
    }

    /// `onMetaData` in AMF0: string marker 02 and length 10, ECMA array marker 08 with 3
    /// entries, each a 16-bit name length, the name, number marker 00 and a big-endian double
    /// (2.0 = 40 00 00 00 00 00 00 00; 7.0 = 40 1C …), then the object end 00 00 09. The reader
    /// skips the script tag.
    @Test func metadataBytes() throws {
        let bytes = FLVMetadata(width: 2, height: 1).serialized()
        let name = { (text: String) -> [UInt8] in [0, UInt8(text.utf8.count)] + Array(text.utf8) + [0] }
        let expected: [UInt8] = [0x02, 0, 10] + Array("onMetaData".utf8) + [0x08, 0, 0, 0, 3]
            + name("width") + [0x40, 0, 0, 0, 0, 0, 0, 0]
            + name("height") + [0x3F, 0xF0, 0, 0, 0, 0, 0, 0]
            + name("videocodecid") + [0x40, 0x1C, 0, 0, 0, 0, 0, 0]
            + [0, 0, 9]
        #expect(bytes == expected)
        var writer = FLVWriter()
        try writer.appendMetadata(FLVMetadata(width: 2, height: 1))
        #expect(writer.bytes[13] == 18 && Array(writer.bytes[24..<24 + bytes.count]) == bytes)
        let contents = try FLVReader.read(writer.bytes)
        #expect(contents.ignoredTagCount == 1 && contents.frames.isEmpty && contents.skippedTags.isEmpty)
    }

    // MARK: - Round trips

    /// Every access unit of the B-frame fixture goes through a file and comes back with the same
    /// NAL units, times (negative composition times included) and format, in both syntaxes.
    @Test(arguments: FLVVideoTag.Syntax.allCases)
    func roundTrip(syntax: FLVVideoTag.Syntax) throws {
        let (units, format) = try Self.fixtureUnits()
        var writer = FLVWriter(syntax: syntax)
        try writer.appendSequenceHeader(format)
        // Composition times −120…+120 ms, so both signs and zero are written.
        let times = units.indices.map { (decode: Int64($0 * 40 + 200), presentation: Int64($0 * 40 + 200 + ($0 % 7 - 3) * 40)) }
        for (unit, time) in zip(units, times) {
            try writer.appendFrame(unit.data, isKeyframe: unit.isIDR, decodeTime: time.decode, presentationTime: time.presentation)
        }
        try writer.appendEndOfSequence(timestamp: times.last!.decode)
        let contents = try FLVReader.read(writer.bytes)
        #expect(contents.skippedTags.isEmpty && contents.warnings.isEmpty)
        #expect(contents.formats == [.h264(format)])
        #expect(contents.endOfSequenceCount == 1)
        #expect(contents.frames.count == units.count)
        for (index, (frame, unit)) in zip(contents.frames, units).enumerated() {
            #expect(frame.data == unit.data, "frame \(index)")
            #expect(frame.h264AccessUnit?.nalUnitTypes == unit.nalUnitTypes, "frame \(index)")
            #expect(frame.format?.h264 == format)
            #expect(frame.decodeTime == times[index].decode && frame.presentationTime == times[index].presentation)
            #expect(frame.isKeyframe == unit.isIDR && frame.syntax == syntax)
        }
        #expect(contents.frames.contains { $0.compositionTime < 0 })
    }

    /// An avcC with 2-byte lengths: the tags carry 2-byte lengths, the reader hands out 4-byte
    /// AVCC with the same NAL units.
    @Test func twoByteLengthsComeBackAsFourByteAVCC() throws {
        let (units, format) = try Self.fixtureUnits()
        var record = format.configurationRecord
        record.lengthSizeMinusOne = 1
        var writer = FLVWriter()
        try writer.appendSequenceHeader(FormatDescription(configurationRecord: record))
        for (index, unit) in units.enumerated() {
            let short = try AVCC.data(nalUnits: unit.nalUnits.map(Array.init), lengthSize: 2)
            try writer.appendFrame(short, isKeyframe: unit.isIDR, decodeTime: Int64(index), presentationTime: Int64(index))
        }
        let frames = try FLVReader.read(writer.bytes).frames
        #expect(frames.map(\.data) == units.map(\.data))
    }

    /// A second, different sequence header is an event and the next frame is in its format.
    @Test func formatChangeIsReported() throws {
        let (units, format) = try Self.fixtureUnits()
        var other = format.configurationRecord
        other.lengthSizeMinusOne = 1 // 2-byte lengths: a different avcC
        var writer = FLVWriter()
        try writer.appendSequenceHeader(format)
        try writer.appendSequenceHeader(format, timestamp: 0) // the same again: no event
        try writer.appendFrame(units[0].data, isKeyframe: true, decodeTime: 0, presentationTime: 0)
        try writer.appendSequenceHeader(FormatDescription(configurationRecord: other), timestamp: 40)
        let short = try AVCC.data(nalUnits: units[0].nalUnits.map(Array.init), lengthSize: 2)
        try writer.appendFrame(short, isKeyframe: true, decodeTime: 40, presentationTime: 40)
        let contents = try FLVReader.read(writer.bytes)
        #expect(contents.formats.count == 2)
        #expect(contents.frames.map(\.format) == contents.formats.map { Optional($0) })
        #expect(contents.frames[1].data == units[0].data)
    }

    // MARK: - Damage

    /// A file of a sequence header and three frames; returns the bytes and where each tag begins.
    static func smallFile() throws -> (bytes: [UInt8], tagStarts: [Int]) {
        let (units, format) = try fixtureUnits()
        var writer = FLVWriter()
        var starts = [writer.bytes.count]
        try writer.appendSequenceHeader(format)
        for index in 0..<3 {
            starts.append(writer.bytes.count)
            try writer.appendFrame(units[index].data, isKeyframe: index == 0, decodeTime: Int64(index * 40),
                                   presentationTime: Int64(index * 40))
        }
        return (writer.bytes, starts)
    }

    /// A NALU tag whose first NAL unit length runs past the tag is reported (with its offset in
    /// the file) and skipped; the frames around it are read.
    @Test func damagedTagIsReportedAndSkipped() throws {
        var (bytes, starts) = try Self.smallFile()
        let lengthAt = starts[2] + 11 + 5 // tag header, then 27 01 00 00 00, then the first length
        bytes[lengthAt] = 0x7F
        let contents = try FLVReader.read(bytes)
        #expect(contents.frames.count == 2)
        #expect(contents.skippedTags.map(\.code) == [.lengthPastEnd])
        #expect(contents.skippedTags.first?.byteOffset == lengthAt)
    }

    /// Tags of another codec — a Sorenson H.263 video tag, an MP3 audio tag — are reported and
    /// skipped; they do not stop the reader.
    @Test func otherTagsAreSkipped() throws {
        var (bytes, starts) = try Self.smallFile()
        bytes[starts[3] + 11] = 0x22 // FrameType 2, CodecID 2 (Sorenson H.263)
        bytes[starts[2]] = 8 // an audio tag now, its first data byte 0x27: SoundFormat 2 (MP3)
        let contents = try FLVReader.read(bytes)
        #expect(contents.frames.count == 1)
        #expect(contents.ignoredTagCount == 0)
        #expect(contents.skippedTags.map(\.code) == [.unsupported, .unsupported])
        #expect(contents.skippedTags.map(\.field) == ["SoundFormat", "CodecID"])
    }

    /// A wrong `PreviousTagSize` is a warning; the frames are all read.
    @Test func previousTagSizeMismatchIsAWarning() throws {
        var (bytes, starts) = try Self.smallFile()
        bytes[starts[2] - 1] &+= 1
        let contents = try FLVReader.read(bytes)
        #expect(contents.frames.count == 3)
        #expect(contents.warnings.map(\.code) == [.flvPreviousTagSizeMismatch])
        #expect(contents.warnings.first?.byteOffset == starts[2] - 4)
    }

    /// A file cut inside its last tag keeps the frames before it and reports the cut.
    @Test(arguments: [5, 11, 30])
    func truncatedLastTagIsReported(cutInto: Int) throws {
        let (bytes, starts) = try Self.smallFile()
        let contents = try FLVReader.read(Array(bytes[..<(starts[3] + cutInto)]))
        #expect(contents.frames.count == 2)
        #expect(contents.skippedTags.map(\.code) == [.truncated])
    }

    /// A tag header that is not one (tag type 0x0F) loses the framing: a thrown error with the
    /// file offset, after the frames before it were handed out.
    @Test func lostFramingIsFatal() throws {
        var (bytes, starts) = try Self.smallFile()
        bytes[starts[2]] = 0x0F
        var reader = try FLVReader(bytes)
        var frames = 0
        do {
            while let event = try reader.next() {
                if case .frame = event { frames += 1 }
            }
            Issue.record("no error")
        } catch {
            #expect(error.code == .flvFramingLost && error.field == "TagType" && error.byteOffset == starts[2])
        }
        #expect(frames == 1)
        #expect(try reader.next() == nil)
    }

    // MARK: - Streaming

    /// Every event of a streaming reader, fed `bytes` in chunks of `size`, then finished; the
    /// fatal error, if one ended it.
    static func streamed(_ bytes: [UInt8], chunk size: Int) -> (events: [FLVReader.Event], error: MediaError?) {
        var reader = FLVReader()
        var events: [FLVReader.Event] = []
        var start = 0
        do {
            while start < bytes.count {
                reader.append(bytes[start..<min(start + size, bytes.count)])
                start += size
                while let event = try reader.next() { events.append(event) }
            }
            reader.finish()
            while let event = try reader.next() { events.append(event) }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }

    /// The whole-file reader's events and fatal error.
    static func whole(_ bytes: [UInt8]) -> (events: [FLVReader.Event], error: MediaError?) {
        var events: [FLVReader.Event] = []
        do {
            var reader = try FLVReader(bytes)
            while let event = try reader.next() { events.append(event) }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }

    /// Chunks of any size give the whole-file reader's events: on a whole file, a damaged one,
    /// one cut inside a tag, one whose framing is lost, and one that is not FLV.
    @Test(arguments: [1, 2, 7, 11, 100, 4096])
    func streamingGivesTheWholeFileEvents(chunk: Int) throws {
        let (bytes, starts) = try Self.smallFile()
        var damaged = bytes
        damaged[starts[2] + 16] = 0x7F
        damaged[starts[3] - 1] &+= 1
        var lost = bytes
        lost[starts[3]] = 0x0F
        for input in [bytes, damaged, Array(bytes[..<(starts[3] + 20)]), lost, Array("FLX".utf8) + bytes.dropFirst(3), Array(bytes.prefix(5))] {
            let expected = Self.whole(input)
            let got = Self.streamed(input, chunk: chunk)
            #expect(got.events == expected.events)
            #expect(got.error == expected.error)
        }
        #expect(Self.whole(bytes).events.count == 4 && Self.whole(damaged).events.count == 5)
    }

    /// A stream longer than the reader keeps (it drops consumed bytes past 64 KiB) still gives
    /// the whole-file events, file offsets included.
    @Test func longStreamKeepsFileOffsets() throws {
        let (units, format) = try Self.fixtureUnits()
        var writer = FLVWriter()
        try writer.appendSequenceHeader(format)
        for round in 0..<20 {
            for (index, unit) in units.enumerated() {
                let time = Int64((round * units.count + index) * 40)
                try writer.appendFrame(unit.data, isKeyframe: unit.isIDR, decodeTime: time, presentationTime: time)
            }
        }
        #expect(writer.bytes.count > 200_000)
        let expected = Self.whole(writer.bytes)
        let got = Self.streamed(writer.bytes, chunk: 1500)
        #expect(expected.events.count == 181 && expected.error == nil)
        #expect(got.events == expected.events && got.error == nil)
    }

    /// A stream not yet finished waits at a cut tag instead of reporting it.
    @Test func unfinishedStreamWaits() throws {
        let (bytes, starts) = try Self.smallFile()
        var reader = FLVReader()
        reader.append(bytes[..<(starts[3] + 20)])
        var frames = 0
        while let event = try reader.next() {
            if case .frame = event { frames += 1 } else if case .skippedTag = event { Issue.record("reported a cut while waiting") }
        }
        #expect(frames == 2)
        reader.append(bytes[(starts[3] + 20)...])
        let last = try reader.next()
        guard case .frame(let frame) = last else { Issue.record("expected the third frame, got \(String(describing: last))"); return }
        #expect(frame.byteOffset == starts[3])
    }

    // MARK: - Malformed catalogue

    static let sequenceHeader: [UInt8] = {
        let record = try! AVCDecoderConfigurationRecord(avcProfileIndication: 66, profileCompatibility: 0xC0, avcLevelIndication: 30,
                                                        sequenceParameterSets: [[0x67, 0x42, 0xC0, 0x1E]], pictureParameterSets: [[0x68, 0xCE]])
        return [0x17, 0, 0, 0, 0] + (try! record.serialized())
    }()

    static let cases: [MalformedCase] = [
        MalformedCase("not FLV", .invalidFLVHeader, field: "Signature") { _ = try FLVReader(Array("FLX\u{1}\u{1}".utf8) + [0, 0, 0, 9]) },
        MalformedCase("empty file", .truncated, field: "DataOffset") { _ = try FLVReader([]) },
        MalformedCase("header cut", .truncated, field: "DataOffset") { _ = try FLVReader([0x46, 0x4C, 0x56, 1, 1, 0, 0]) },
        MalformedCase("DataOffset 8", .invalidFLVHeader, field: "DataOffset") { _ = try FLVReader([0x46, 0x4C, 0x56, 1, 1, 0, 0, 0, 8]) },
        MalformedCase("DataOffset past the end", .truncated, field: "DataOffset") {
            _ = try FLVReader([0x46, 0x4C, 0x56, 1, 1, 0, 0, 0, 20])
        },
        MalformedCase("tag type 7", .flvFramingLost, field: "TagType") { _ = try FLVTagHeader(parsing: [7] + [UInt8](repeating: 0, count: 10)) },
        MalformedCase("reserved bits set", .flvFramingLost, field: "TagType") { _ = try FLVTagHeader(parsing: [0x49] + [UInt8](repeating: 0, count: 10)) },
        MalformedCase("stream id 1", .flvFramingLost, field: "StreamID") { _ = try FLVTagHeader(parsing: [9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]) },
        MalformedCase("tag header cut", .truncated, field: "TagType") { _ = try FLVTagHeader(parsing: [9, 0, 0]) },
        MalformedCase("empty video data", .truncated, field: "FrameType") { _ = try FLVVideoTag(parsing: []) },
        MalformedCase("FrameType 0", .valueOutOfRange, field: "FrameType") { _ = try FLVVideoTag(parsing: [0x07, 1, 0, 0, 0]) },
        MalformedCase("command frame", .unsupported, field: "FrameType") { _ = try FLVVideoTag(parsing: [0x57, 0]) },
        MalformedCase("CodecID 12", .unsupported, field: "CodecID") { _ = try FLVVideoTag(parsing: [0x1C, 1, 0, 0, 0]) },
        MalformedCase("no AVCPacketType", .truncated, field: "AVCPacketType") { _ = try FLVVideoTag(parsing: [0x17]) },
        MalformedCase("CompositionTime cut", .truncated, field: "CompositionTime") { _ = try FLVVideoTag(parsing: [0x27, 1, 0]) },
        MalformedCase("AVCPacketType 3", .valueOutOfRange, field: "AVCPacketType") { _ = try FLVVideoTag(parsing: [0x27, 3, 0, 0, 0]) },
        MalformedCase("avcC version 2", .invalidConfigurationRecord, field: "configurationVersion") {
            var bytes = sequenceHeader
            bytes[5] = 2
            _ = try FLVVideoTag(parsing: bytes)
        },
        MalformedCase("avcC cut", .truncated, field: "pictureParameterSetNALUnit[0]") {
            _ = try FLVVideoTag(parsing: sequenceHeader.dropLast())
        },
        MalformedCase("enhanced FourCC cut", .truncated, field: "VideoFourCc") { _ = try FLVVideoTag(parsing: [0x91, 0x61, 0x76]) },
        MalformedCase("enhanced av01", .unsupported, field: "VideoFourCc") { _ = try FLVVideoTag(parsing: [0x91] + Array("av01".utf8) + [0, 0, 0]) },
        MalformedCase("hvc1 FourCC cut", .truncated, field: "VideoFourCc") { _ = try FLVVideoTag(parsing: [0x90, 0x68, 0x76, 0x63]) },
        MalformedCase("hvc1 CompositionTime cut", .truncated, field: "CompositionTime") {
            _ = try FLVVideoTag(parsing: [0x91] + Array("hvc1".utf8) + [0, 0])
        },
        MalformedCase("hvcC shorter than its fixed part", .truncated, field: "HEVCDecoderConfigurationRecord") {
            _ = try FLVVideoTag(parsing: [0x90] + Array("hvc1".utf8) + [1] + [UInt8](repeating: 0, count: 21))
        },
        MalformedCase("hvcC version 0", .invalidConfigurationRecord, field: "configurationVersion") {
            _ = try FLVVideoTag(parsing: [0x90] + Array("hvc1".utf8) + [UInt8](repeating: 0, count: 23))
        },
        MalformedCase("hvcC with 3-byte lengths", .invalidConfigurationRecord, field: "lengthSizeMinusOne") {
            _ = try FLVVideoTag(parsing: [0x90] + Array("hvc1".utf8) + [1] + [UInt8](repeating: 0, count: 20) + [0xFE, 0])
        },
        MalformedCase("avcC in an hvc1 tag", .invalidConfigurationRecord, field: "VideoFourCc") {
            var tag = try FLVVideoTag(parsing: sequenceHeader)
            (tag.syntax, tag.codec) = (.enhanced, .hevc)
            _ = try tag.serialized()
        },
        MalformedCase("enhanced multitrack", .unsupported, field: "VideoPacketType") { _ = try FLVVideoTag(parsing: [0x96] + Array("avc1".utf8)) },
        MalformedCase("enhanced CompositionTime cut", .truncated, field: "CompositionTime") {
            _ = try FLVVideoTag(parsing: [0x91] + Array("avc1".utf8) + [0])
        },
        MalformedCase("composition time past SI24", .valueOutOfRange, field: "CompositionTime") {
            var writer = FLVWriter()
            try writer.appendFrame([0, 0, 0, 1, 0x65], isKeyframe: true, decodeTime: 0, presentationTime: 0x80_0000)
        },
        MalformedCase("negative timestamp", .valueOutOfRange, field: "Timestamp") {
            var writer = FLVWriter()
            try writer.appendEndOfSequence(timestamp: -1)
        },
    ]

    @Test(arguments: Self.cases)
    func rejected(_ c: MalformedCase) {
        c.expectRejected()
    }

    /// The avcC error's offset is in the tag data: the version byte follows the 5-byte header.
    @Test func sequenceHeaderErrorOffsetIsInTheTag() throws {
        var bytes = Self.sequenceHeader
        bytes[5] = 2
        #expect(throws: MediaError(.invalidConfigurationRecord, field: "configurationVersion", byteOffset: 5,
                                  "configurationVersion is 2, not 1")) { try FLVVideoTag(parsing: bytes) }
    }

    /// A failed append leaves the writer's bytes as they were.
    @Test func failedAppendWritesNothing() throws {
        var writer = FLVWriter()
        let before = writer.bytes
        #expect(throws: MediaError.self) {
            try writer.appendFrame([0, 0, 0, 1, 0x65], isKeyframe: true, decodeTime: 0, presentationTime: -0x80_0001)
        }
        #expect(writer.bytes == before)
    }
}
