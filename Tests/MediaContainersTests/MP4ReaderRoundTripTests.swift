import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// The package's own MP4 writers read back by ``MP4Reader`` (FFmpeg checks both sides in the
/// peer tests; this checks they agree with each other): the fixture's frames, progressive and
/// fragmented, come back with the same bytes, keyframes and frame-to-frame times.
@Suite(.ownThread) struct MP4ReaderRoundTripTests {
    static func sourceFrames() throws -> [CompressedFrame] {
        try MP4Conversion.frames(fromAnnexB: TestFixtures.data("flv/x264_bframes_320x192_9f.264"), frameRate: nil)
    }

    static func readBack(_ bytes: [UInt8]) throws -> [MP4Frame] {
        var reader = try MP4Reader(bytes)
        var frames: [MP4Frame] = []
        while let frame = try reader.next() { frames.append(frame) }
        #expect(reader.warnings.isEmpty, "\(reader.warnings)")
        return frames
    }

    static func expectSame(_ read: [MP4Frame], as source: [CompressedFrame]) {
        #expect(read.map(\.data) == source.map(\.data))
        #expect(read.map(\.isKeyframe) == source.map(\.isKeyframe))
        let tick = Duration.microseconds(12) // under one 90 kHz tick
        for (ours, theirs) in zip(read, source) {
            let presentation = (ours.frame.presentationTime - read[0].frame.presentationTime)
                - (theirs.presentationTime - source[0].presentationTime)
            let decode = (ours.frame.decodeTime - read[0].frame.decodeTime) - (theirs.decodeTime - source[0].decodeTime)
            #expect(presentation < tick && presentation > .zero - tick && decode < tick && decode > .zero - tick,
                    "pts \(ours.frame.presentationTime) vs \(theirs.presentationTime), dts \(ours.frame.decodeTime) vs \(theirs.decodeTime)")
        }
    }

    @Test func progressiveWriterReadsBack() throws {
        let source = try Self.sourceFrames()
        var muxer = MP4ProgressiveMuxer()
        var media: [UInt8] = []
        for frame in source { media += try muxer.append(frame) }
        let (rest, header) = try muxer.finish()
        Self.expectSame(try Self.readBack(header + media + rest), as: source)
    }

    @Test func fragmentedWriterReadsBack() throws {
        let source = try Self.sourceFrames()
        var writer = try FragmentedMP4Writer(formats: [source[0].format])
        var bytes = try writer.initializationSegment()
        for frame in source {
            if frame.isKeyframe, let fragment = try writer.fragment(before: frame) { bytes += fragment }
            _ = try writer.append(frame)
        }
        if let fragment = try writer.fragment() { bytes += fragment }
        let read = try Self.readBack(bytes)
        Self.expectSame(read, as: source)
    }
}
