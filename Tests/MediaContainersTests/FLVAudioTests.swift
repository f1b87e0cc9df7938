import AudioCodecs
import H264
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// FLV audio tags (FLV specification v10.1 annex E.4.2.1): byte vectors built from the
/// `AUDIODATA` and `AACAUDIODATA` tables, audio and video frames through the one
/// ``FLVReader/Event/frame(_:)`` case, and the audio rows of the malformed-input catalogue.
@Suite(.ownThread) struct FLVAudioTests {
    /// 44.1 kHz stereo AAC LC, as FFmpeg's `aac` encoder writes it (`12 10`).
    static let stereo44k = AudioSpecificConfig(samplingFrequency: 44_100, channelConfiguration: 2).formatDescription
    /// 48 kHz mono AAC LC (`11 88`).
    static let mono48k = AudioSpecificConfig(samplingFrequency: 48_000, channelConfiguration: 1).formatDescription

    // MARK: - Byte vectors

    /// `SoundFormat 10 | SoundRate 3 | SoundSize 1 | SoundType 1` = 0xAF, `AACPacketType` 0, then
    /// the `AudioSpecificConfig` (`12 10`: type 2, index 4 = 44.1 kHz, 2 channels).
    @Test func aacSequenceHeaderBytes() throws {
        let tag = try FLVAudioTag.sequenceHeader(Self.stereo44k)
        #expect(try tag.serialized() == [0xAF, 0x00, 0x12, 0x10])
        let parsed = try FLVAudioTag(parsing: [0xAF, 0x00, 0x12, 0x10])
        #expect(parsed == tag)
        #expect(parsed.packet == .sequenceHeader(Self.stereo44k))
        #expect(parsed.soundFormat == .aac && parsed.soundRate == .rate44100 && parsed.soundSize == .bits16 && parsed.soundType == .stereo)
    }

    /// `AF 01` then the raw frame as it is; the tag alone gives no format (the sequence header does).
    @Test func aacRawFrameBytes() throws {
        let frame: [UInt8] = [0x21, 0x10, 0x04, 0x60, 0x8C, 0x1C]
        let tag = try FLVAudioTag.frame(frame, format: Self.stereo44k)
        #expect(try tag.serialized() == [0xAF, 0x01] + frame)
        let parsed = try FLVAudioTag(parsing: [0xAF, 0x01] + frame)
        #expect(parsed.packet == .frame(frame))
        #expect(parsed.impliedFormat == nil)
    }

    /// G.711 as FFmpeg's FLV muxer writes it: `SoundRate` 0 (8 kHz for these formats), 16-bit,
    /// mono or stereo — A-law 0x72/0x73, µ-law 0x82/0x83 — then the samples.
    @Test(arguments: [(AudioCodec.pcma, 1, UInt8(0x72)), (.pcma, 2, 0x73), (.pcmu, 1, 0x82), (.pcmu, 2, 0x83)])
    func g711FrameBytes(codec: AudioCodec, channels: Int, first: UInt8) throws {
        let format = AudioFormatDescription(codec: codec, sampleRate: 8000, channelCount: channels)
        let samples: [UInt8] = [0xD5, 0x55, 0xFF, 0x7F]
        let tag = try FLVAudioTag.frame(samples, format: format)
        #expect(try tag.serialized() == [first] + samples)
        let parsed = try FLVAudioTag(parsing: [first] + samples)
        #expect(parsed == tag)
        #expect(parsed.impliedFormat == format)
    }

    // MARK: - Reading

    /// Video access units and AAC and G.711 frames come through `.frame`, in file order, each with
    /// its bytes, time and format; audio sequence headers are no events and audio tags are not
    /// counted as ignored.
    @Test func audioAndVideoFramesComeThroughOneCase() throws {
        let (units, video) = try FLVTests.fixtureUnits()
        let g711 = AudioFormatDescription(codec: .pcmu, sampleRate: 8000, channelCount: 1)
        var writer = FLVWriter(header: FLVFileHeader(hasAudio: true))
        try writer.appendSequenceHeader(video)
        try writer.appendAudioSequenceHeader(Self.stereo44k)
        var expected: [(data: [UInt8], time: Int64, audio: AudioFormatDescription?)] = []
        for (index, unit) in units.prefix(3).enumerated() {
            let time = Int64(index * 40)
            try writer.appendFrame(unit.data, isKeyframe: unit.isIDR, decodeTime: time, presentationTime: time)
            let aac: [UInt8] = [0x21, UInt8(index), 0x04]
            try writer.appendAudioFrame(aac, format: Self.stereo44k, timestamp: time + 1)
            expected += [(unit.data, time, nil), (aac, time + 1, Self.stereo44k)]
        }
        try writer.appendAudioFrame([0xFF, 0x7F], format: g711, timestamp: 200)
        expected.append(([0xFF, 0x7F], 200, g711))
        var reader = try FLVReader(writer.bytes)
        var frames: [FLVFrame] = [], formats = 0
        while let event = try reader.next() {
            switch event {
            case .frame(let frame): frames.append(frame)
            case .formatChanged: formats += 1
            default: Issue.record("unexpected \(event)")
            }
        }
        #expect(formats == 1 && reader.ignoredTagCount == 0)
        #expect(reader.audioFormat == g711)
        #expect(frames.map(\.data) == expected.map(\.data))
        #expect(frames.map(\.decodeTime) == expected.map(\.time))
        #expect(frames.map(\.audioFormat) == expected.map(\.audio))
        for frame in frames where frame.audioFormat != nil {
            #expect(frame.format == nil && frame.isKeyframe && frame.compositionTime == 0 && frame.h264AccessUnit == nil)
            #expect(frame.frame.presentationTime == .milliseconds(frame.decodeTime))
        }
    }

    /// An AAC frame before any AAC sequence header has no format: it is reported and skipped (at
    /// its tag's offset), and the frames after the sequence header are read.
    @Test func aacFrameBeforeSequenceHeaderIsSkipped() throws {
        var writer = FLVWriter(header: FLVFileHeader(hasAudio: true, hasVideo: false))
        let firstTag = writer.bytes.count
        try writer.appendAudioFrame([1, 2, 3], format: Self.mono48k, timestamp: 0)
        try writer.appendAudioSequenceHeader(Self.mono48k, timestamp: 21)
        try writer.appendAudioFrame([4, 5, 6], format: Self.mono48k, timestamp: 21)
        let contents = try FLVReader.read(writer.bytes)
        #expect(contents.skippedTags.map(\.code) == [.missingParameterSet])
        #expect(contents.skippedTags.first?.byteOffset == firstTag)
        #expect(contents.frames.map(\.data) == [[4, 5, 6]])
        #expect(contents.frames.first?.audioFormat == Self.mono48k)
    }

    /// A second, different AAC sequence header applies to the frames after it.
    @Test func aacFormatChangeAppliesToLaterFrames() throws {
        var writer = FLVWriter(header: FLVFileHeader(hasAudio: true, hasVideo: false))
        try writer.appendAudioSequenceHeader(Self.stereo44k)
        try writer.appendAudioFrame([1], format: Self.stereo44k, timestamp: 0)
        try writer.appendAudioSequenceHeader(Self.mono48k, timestamp: 23)
        try writer.appendAudioFrame([2], format: Self.mono48k, timestamp: 23)
        let frames = try FLVReader.read(writer.bytes).frames
        #expect(frames.map(\.audioFormat) == [Self.stereo44k, Self.mono48k])
    }

    /// A damaged audio tag (here: no body at all) and an MP3 tag are reported with their offsets
    /// in the file and skipped; the AAC frame after them is read.
    @Test func damagedAudioTagsAreSkipped() throws {
        var writer = FLVWriter(header: FLVFileHeader(hasAudio: true, hasVideo: false))
        try writer.appendAudioSequenceHeader(Self.stereo44k)
        var bytes = writer.takeBytes()
        let emptyTag = bytes.count
        bytes += [8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 11]
        let mp3Tag = bytes.count
        bytes += [8, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0x2F, 0xFF] + [0, 0, 0, 13]
        try writer.appendAudioFrame([7], format: Self.stereo44k, timestamp: 0)
        bytes += writer.bytes
        let contents = try FLVReader.read(bytes)
        #expect(contents.skippedTags.map(\.code) == [.truncated, .unsupported])
        #expect(contents.skippedTags.map(\.field) == ["SoundFormat", "SoundFormat"])
        #expect(contents.skippedTags.map(\.byteOffset) == [emptyTag + 11, mp3Tag + 11])
        #expect(contents.warnings.isEmpty && contents.frames.map(\.data) == [[7]])
    }

    /// The old name still compiles (deprecated) and is the same type.
    @available(*, deprecated)
    @Test func oldFrameNameIsTheSameType() {
        #expect(FLVVideoFrame.self == FLVFrame.self)
    }

    // MARK: - Malformed catalogue

    static let cases: [MalformedCase] = [
        MalformedCase("audio tag with no body", .truncated, field: "SoundFormat") { _ = try FLVAudioTag(parsing: []) },
        MalformedCase("AAC tag without AACPacketType", .truncated, field: "AACPacketType") { _ = try FLVAudioTag(parsing: [0xAF]) },
        MalformedCase("AAC sequence header cut", .truncated, field: "samplingFrequencyIndex") {
            _ = try FLVAudioTag(parsing: [0xAF, 0x00, 0x12]) // audioObjectType 2, then 3 of the index's 4 bits
        },
        MalformedCase("AAC sequence header empty", .truncated, field: "audioObjectType") { _ = try FLVAudioTag(parsing: [0xAF, 0x00]) },
        MalformedCase("AACPacketType 2", .valueOutOfRange, field: "AACPacketType") { _ = try FLVAudioTag(parsing: [0xAF, 0x02, 0x21]) },
        MalformedCase("AAC raw tag without a frame", .truncated, field: "Data") { _ = try FLVAudioTag(parsing: [0xAF, 0x01]) },
        MalformedCase("G.711 tag without samples", .truncated, field: "SoundData") { _ = try FLVAudioTag(parsing: [0x72]) },
        MalformedCase("MP3", .unsupported, field: "SoundFormat") { _ = try FLVAudioTag(parsing: [0x2F, 0xFF, 0xFB]) },
        MalformedCase("ExAudioTagHeader", .unsupported, field: "SoundFormat") { _ = try FLVAudioTag(parsing: [0x90] + Array("Opus".utf8)) },
        MalformedCase("Opus in a legacy tag", .unsupported, field: "SoundFormat") {
            _ = try FLVAudioTag.frame([0xFC], format: AudioFormatDescription(codec: .opus, sampleRate: 48_000, channelCount: 2))
        },
        MalformedCase("G.711 at 16 kHz", .unsupported, field: "SoundRate") {
            _ = try FLVAudioTag.frame([0xD5], format: AudioFormatDescription(codec: .pcma, sampleRate: 16_000, channelCount: 1))
        },
        MalformedCase("G.711 sequence header", .unsupported, field: "SoundFormat") {
            var writer = FLVWriter()
            try writer.appendAudioSequenceHeader(AudioFormatDescription(codec: .pcmu, sampleRate: 8000, channelCount: 1))
        },
        MalformedCase("AAC format without its configuration", .invalidConfigurationRecord, field: "AudioSpecificConfig") {
            _ = try FLVAudioTag.sequenceHeader(AudioFormatDescription(codec: .aac, sampleRate: 44_100, channelCount: 2))
        },
        MalformedCase("silence for 5.1", .unsupported, field: "channelConfiguration") { _ = try AACSilence.frame(channelConfiguration: 6) },
    ]

    @Test(arguments: Self.cases)
    func rejected(_ c: MalformedCase) {
        c.expectRejected()
    }

    /// A sequence header's error is offset to the tag data: the cut index begins at bit 5 of the
    /// configuration, byte 2 of the tag.
    @Test func sequenceHeaderErrorOffsetIsInTheTag() {
        #expect { try FLVAudioTag(parsing: [0xAF, 0x00, 0x12]) } throws: { error in
            (error as? MediaError)?.byteOffset == 2
        }
    }
}
