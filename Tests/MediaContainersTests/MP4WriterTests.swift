import H264
import H264TestSupport
@testable import MediaContainers
import MediaCore
import Testing

/// The MP4 writers' boxes, byte by byte where the layout is the point (ISO/IEC 14496-12): sizes
/// patched, `stco`/`co64`, `ctts` and `stss` only when needed, edit lists, sample descriptions,
/// and the fragments' `tfdt`/`trun`.
@Suite struct MP4WriterTests {
    /// The boxes of `bytes` (a box's body when a path is given), walked through containers: each
    /// box's type path (`moov/trak/mdia`), its body offset and size.
    static func boxes(_ bytes: [UInt8]) -> [(path: String, body: ArraySlice<UInt8>)] {
        let containers: Set<String> = ["moov", "trak", "mdia", "minf", "stbl", "edts", "mvex", "moof", "traf", "dinf"]
        var found: [(path: String, body: ArraySlice<UInt8>)] = []
        func walk(_ data: ArraySlice<UInt8>, prefix: String) {
            var at = data.startIndex
            while data.endIndex - at >= 8 {
                var size = Int(data[at]) << 24 | Int(data[at + 1]) << 16 | Int(data[at + 2]) << 8 | Int(data[at + 3])
                let type = MP4BoxType(bytes: data[(at + 4)..<(at + 8)]).description
                var header = 8
                if size == 1 {
                    size = data[(at + 8)..<(at + 16)].reduce(0) { $0 << 8 | Int($1) }
                    header = 16
                }
                guard size >= header, at + size <= data.endIndex else { return }
                let path = prefix.isEmpty ? type : prefix + "/" + type
                let body = data[(at + header)..<(at + size)]
                found.append((path, body))
                if containers.contains(type) { walk(body, prefix: path) }
                at += size
            }
        }
        walk(bytes[...], prefix: "")
        return found
    }

    /// The 32-bit big-endian values of a box body from `offset`.
    static func words(_ body: ArraySlice<UInt8>, from offset: Int = 0) -> [UInt32] {
        stride(from: body.startIndex + offset, to: body.endIndex - 3, by: 4).map { index in
            body[index...index + 3].reduce(0) { $0 << 8 | UInt32($1) }
        }
    }

    /// Twelve frames of the format of the x264 fixture `vui_hrd_high_160x96.264`, 25 fps, a
    /// keyframe every 6 (the muxers do not read the samples: their bytes are made up).
    static func fixtureFrames() throws -> [CompressedFrame] {
        let format = try #require(try MP4Conversion.frames(fromAnnexB: TestFixtures.data("x264/vui_hrd_high_160x96.264"),
                                                           frameRate: nil).first?.format)
        return (0..<12).map { index in
            CompressedFrame(data: [0, 0, 0, 2, 0x41, UInt8(index)], format: format, presentationTime: .milliseconds(40 * index),
                            isKeyframe: index % 6 == 0)
        }
    }

    @Test func nestedBoxSizesArePatched() {
        var writer = MP4BoxWriter()
        writer.box("moov") { moov in
            moov.fullBox("mvhd", version: 1, flags: 3) { $0.append32(7) }
            moov.box("free") { $0.append([1, 2, 3]) }
        }
        #expect(writer.bytes == [0, 0, 0, 35] + Array("moov".utf8) + [0, 0, 0, 16] + Array("mvhd".utf8) + [1, 0, 0, 3, 0, 0, 0, 7]
            + [0, 0, 0, 11] + Array("free".utf8) + [1, 2, 3])
    }

    @Test func mediaDataHeaderTakesALargeSizePast4GiB() {
        #expect(MP4BoxWriter.header("mdat", bodySize: 100) == [0, 0, 0, 108] + Array("mdat".utf8))
        let large = MP4BoxWriter.header("mdat", bodySize: 5_000_000_000)
        #expect(large == [0, 0, 0, 1] + Array("mdat".utf8) + MP4BoxWriter.bigEndian(5_000_000_016, count: 8))
    }

    @Test(arguments: [([0, 1000, UInt64(UInt32.max)], "stco"), ([0, 1000, UInt64(UInt32.max) + 1], "co64")])
    func chunkOffsetsTakeCo64Past4GiB(offsets: [UInt64], type: String) {
        var writer = MP4BoxWriter()
        MP4SampleTable.appendChunkOffsets(offsets, to: &writer)
        let box = Self.boxes(writer.bytes)
        #expect(box.map(\.path) == [type])
        let values = Self.words(box[0].body, from: 4)
        #expect(values[0] == 3)
        if type == "co64" {
            #expect(Array(values[1...]) == [0, 0, 0, 1000, 1, 0])
        } else {
            #expect(Array(values[1...]) == offsets.map(UInt32.init))
        }
    }

    /// Frames with equal presentation and decoding times get no `ctts`; B-frames (x264's
    /// fixture has none, so times are reordered by hand) get a version 0 `ctts` and an edit
    /// list starting at the first presentation.
    @Test(arguments: [false, true]) func compositionOffsetsOnlyWithBFrames(reordered: Bool) throws {
        var frames = try Self.fixtureFrames()
        for index in frames.indices { frames[index].presentationTime = frames[index].decodeTime }
        if reordered {
            for index in frames.indices { frames[index].presentationTime = .milliseconds(40 * Self.slot(index)) }
        }
        var muxer = MP4ProgressiveMuxer()
        for frame in frames { _ = try muxer.append(frame) }
        let header = try muxer.finish().header
        let paths = Self.boxes(header).map(\.path)
        #expect(paths.contains("moov/trak/mdia/minf/stbl/ctts") == reordered)
        #expect(paths.contains("moov/trak/edts/elst") == reordered)
        #expect(paths.contains("moov/trak/mdia/minf/stbl/stss"))
        if reordered {
            let elst = try #require(Self.boxes(header).first { $0.path == "moov/trak/edts/elst" })
            // entry_count 1; segment_duration from the first presentation to the end of the last
            // (90 kHz); media_time = one frame (3600).
            let last = frames.indices.map(Self.slot).max() ?? 0
            #expect(Self.words(elst.body) == [0, 1, UInt32(last * 3600), 3600, 0x0001_0000])
        }
    }

    /// The presentation slot of the frame decoded n-th in an I P B pattern (decoding order
    /// I0 P2 B1, presented after one frame's delay).
    static func slot(_ index: Int) -> Int { index + [1, 2, 0][index % 3] }

    @Test func g711IsRefusedWithItsCode() {
        let format = AudioFormatDescription(codec: .pcmu, sampleRate: 8000, channelCount: 1)
        var muxer = MP4ProgressiveMuxer()
        #expect(throws: MediaError(.mp4UnsupportedCodec, field: "codec",
                                   "G.711 (PCMU) has no MP4 sample entry players accept: convert it to AAC first")) {
            _ = try muxer.append(CompressedFrame(data: [0xFF], format: format, presentationTime: .zero))
        }
        #expect(throws: MediaError.self) { _ = try FragmentedMP4Writer(formats: [.audio(format)]) }
    }

    @Test func decodeTimesMustIncrease() throws {
        let frames = try Self.fixtureFrames()
        var muxer = MP4ProgressiveMuxer()
        _ = try muxer.append(frames[1])
        #expect(throws: MediaError.self) { _ = try muxer.append(frames[0]) }
    }

    /// A second SPS mid-stream: `stsd` with two entries, and `stsc` naming the second from the
    /// chunk where it starts.
    @Test func formatChangeAddsASampleDescription() throws {
        let frames = try Self.fixtureFrames()
        _ = try #require(frames.first?.videoFormat)
        let other = try #require(try MP4Conversion.frames(fromAnnexB: TestFixtures.data("x264/high_cqmfile_80x44.264"),
                                                          frameRate: FrameRate(numerator: 25, denominator: 1)).first)
        var muxer = MP4ProgressiveMuxer()
        for frame in frames.prefix(5) { _ = try muxer.append(frame) }
        var changed = other
        changed.decodeTime = .milliseconds(200)
        changed.presentationTime = .milliseconds(200)
        _ = try muxer.append(changed)
        let boxes = Self.boxes(try muxer.finish().header)
        let stsd = try #require(boxes.first { $0.path == "moov/trak/mdia/minf/stbl/stsd" })
        #expect(Self.words(stsd.body, from: 4).first == 2)
        let stsc = try #require(boxes.first { $0.path == "moov/trak/mdia/minf/stbl/stsc" })
        // two rows: chunk 1 holds 5 samples of entry 1, chunk 2 one sample of entry 2.
        #expect(Self.words(stsc.body) == [0, 2, 1, 5, 1, 2, 1, 2])
    }

    /// Fragments: `mfhd` counts, `tfdt` continues, `trun` version 1 with the first sample's
    /// composition offset 0 and the others signed.
    @Test func fragmentsAreContinuousWithSignedOffsets() throws {
        let frames = try Self.fixtureFrames().prefix(8).enumerated().map { index, frame in
            var copy = frame
            copy.presentationTime = .milliseconds(40 * Self.slot(index))
            return copy
        }
        var writer = try FragmentedMP4Writer(formats: [frames[0].format])
        let initialization = Self.boxes(try writer.initializationSegment()).map(\.path)
        #expect(initialization.contains("moov/mvex/trex"))
        #expect(initialization.contains("moov/trak/mdia/minf/stbl/stsd"))
        var fragments: [[UInt8]] = []
        for (index, frame) in frames.enumerated() {
            if index == 4, let fragment = try writer.fragment() { fragments.append(fragment) }
            #expect(try writer.append(frame) == nil)
        }
        fragments.append(try #require(try writer.fragment()))
        #expect(try writer.fragment() == nil)
        for (number, fragment) in fragments.enumerated() {
            let boxes = Self.boxes(fragment)
            #expect(Self.words(try #require(boxes.first { $0.path == "moof/mfhd" }).body) == [0, UInt32(number + 1)])
            let tfdt = Self.words(try #require(boxes.first { $0.path == "moof/traf/tfdt" }).body)
            #expect(tfdt == [0x0100_0000, 0, UInt32(number * 4 * 3600)])
            let trun = Self.words(try #require(boxes.first { $0.path == "moof/traf/trun" }).body)
            #expect(trun[0] == 0x0100_0F01)
            #expect(trun[1] == 4)
            let offsets = (0..<4).map { Int32(bitPattern: trun[3 + 4 * $0 + 3]) }
            // presentation − decoding time minus the first frame's (one frame).
            #expect(offsets == (4 * number..<4 * number + 4).map { Int32((Self.slot($0) - $0 - 1) * 3600) })
            // data_offset: past the moof and the mdat header.
            let moofSize = Int(Self.words(fragment[0..<4])[0])
            #expect(trun[2] == UInt32(moofSize + 8))
        }
    }

    /// A frame of another format: the fragment of the frames before it, and an initialization
    /// segment whose `avcC` is the new format's.
    @Test func fragmentedFormatChangeGivesANewInitializationSegment() throws {
        let frames = try Self.fixtureFrames()
        let other = try #require(try MP4Conversion.frames(fromAnnexB: TestFixtures.data("x264/high_cqmfile_80x44.264"),
                                                          frameRate: nil).first)
        var writer = try FragmentedMP4Writer(formats: [frames[0].format])
        for frame in frames.prefix(3) { #expect(try writer.append(frame) == nil) }
        var changed = other
        changed.decodeTime = .milliseconds(120)
        changed.presentationTime = .milliseconds(120)
        let change = try #require(try writer.append(changed))
        let fragment = Self.boxes(try #require(change.fragment))
        #expect(Self.words(try #require(fragment.first { $0.path == "moof/traf/trun" }).body)[1] == 3)
        #expect(writer.formats == [changed.format])
        let avcC = try #require(other.videoFormat?.configurationRecordBytes)
        #expect(change.initializationSegment.firstRange(of: avcC) != nil)
        let next = Self.boxes(try #require(try writer.fragment()))
        #expect(Self.words(try #require(next.first { $0.path == "moof/traf/tfdt" }).body) == [0x0100_0000, 0, 3 * 3600])
    }

    /// `hev1` on request, `hvc1` by default; the sample entry's type names the codec.
    @Test func sampleEntryTypes() throws {
        let hevc = try MP4Conversion.frames(fromAnnexB: TestFixtures.data("hevc/tiny_16x16.265"), frameRate: nil)[0].format
        #expect(try MP4SampleEntry.type(of: hevc) == "hvc1")
        #expect(try MP4SampleEntry.type(of: hevc, hevcEntry: .hev1) == "hev1")
        #expect(try MP4SampleEntry.type(of: Self.fixtureFrames()[0].format) == "avc1")
        #expect(try MP4SampleEntry.type(of: .audio(AudioFormatDescription(codec: .opus, sampleRate: 48_000, channelCount: 2))) == "Opus")
    }

    /// `esds` of AAC-LC 44.1 kHz mono (ASC 12 08): ES_Descriptor (tag 3) with ES_ID 1,
    /// DecoderConfigDescriptor (tag 4: 0x40 MPEG-4 Audio, streamType 5 → 0x15),
    /// DecoderSpecificInfo (tag 5) = the ASC, SLConfigDescriptor (tag 6) predefined 2.
    @Test func elementaryStreamDescriptorBytes() {
        let format = AudioFormatDescription(codec: .aac, sampleRate: 44_100, channelCount: 1, magicCookie: [0x12, 0x08], samplesPerFrame: 1024)
        #expect(MP4SampleEntry.elementaryStreamDescriptor(format, trackID: 1) ==
            [0x03, 25, 0, 1, 0,
             0x04, 17, 0x40, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
             0x05, 2, 0x12, 0x08,
             0x06, 1, 0x02])
    }

    /// `dOps` from an `OpusHead` (RFC 7845 §5.1, little-endian): the same fields big-endian,
    /// Version 0 (pre-skip 312 = 0x0138, input rate 48000 = 0xBB80).
    @Test func opusSpecificBoxFromOpusHead() {
        let head = Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0]
        let format = AudioFormatDescription(codec: .opus, sampleRate: 48_000, channelCount: 2, magicCookie: head)
        #expect(MP4SampleEntry.opusSpecificBox(format) == [0, 2, 0x01, 0x38, 0, 0, 0xBB, 0x80, 0, 0, 0])
    }

    /// 90 kHz where a frame is a whole number of its ticks, else the rate's numerator.
    @Test(arguments: [(25, 1, 90_000), (30_000, 1001, 90_000), (60, 1, 90_000), (24_000, 1001, 24_000), (7, 1, 7)])
    func videoTimescaleKeepsFrameTimesExact(numerator: Int, denominator: Int, timescale: Int) {
        #expect(MP4Conversion.videoTimescale(for: FrameRate(numerator: numerator, denominator: denominator)) == timescale)
    }

    /// Durations in ticks, rounded to the nearest (exact in 128 bits).
    @Test func ticksRoundToTheNearest() {
        #expect(MP4Time.ticks(.seconds(1) * 1001 / 30_000, timescale: 90_000) == 3003)
        #expect(MP4Time.ticks(.seconds(3600 * 24) + .milliseconds(40), timescale: 90_000) == 7_776_003_600)
        #expect(MP4Time.ticks(.milliseconds(-40), timescale: 90_000) == -3600)
        #expect(MP4Time.rescale(3003, from: 90_000, to: 1000) == 33)
    }

    /// `hvc1` samples leave their VPS, SPS and PPS to the `hvcC`; `hev1` and H.264 samples keep
    /// them; data whose lengths do not add up is kept as it is.
    @Test func hvc1SamplesLeaveTheParameterSetsOut() throws {
        let hevc = try MP4Conversion.frames(fromAnnexB: TestFixtures.data("hevc/tiny_16x16.265"), frameRate: nil)[0].format
        let vps: [UInt8] = [0, 0, 0, 3, 0x40, 0x01, 0x0C], slice: [UInt8] = [0, 0, 0, 3, 0x26, 0x01, 0xAF]
        let frame = CompressedFrame(data: vps + slice, format: hevc, presentationTime: .zero, isKeyframe: true)
        #expect(MP4SampleEntry.sampleData(of: frame, hevcEntry: .hvc1) == slice)
        #expect(MP4SampleEntry.sampleData(of: frame, hevcEntry: .hev1) == vps + slice)
        var broken = frame
        broken.data = vps + [0, 0, 0, 9, 0x26]
        #expect(MP4SampleEntry.sampleData(of: broken, hevcEntry: .hvc1) == broken.data)
        var h264 = try Self.fixtureFrames()[0]
        h264.data = [0, 0, 0, 2, 0x67, 0x64] + [0, 0, 0, 2, 0x65, 0x88]
        #expect(MP4SampleEntry.sampleData(of: h264, hevcEntry: .hvc1) == h264.data)
    }

    /// A fragment cut before a known next frame: its track's last sample lasts until it (a
    /// frame of 80 ms instead of the previous 40 ms).
    @Test func fragmentBeforeANextFrameEndsExactly() throws {
        let frames = try Self.fixtureFrames()
        var writer = try FragmentedMP4Writer(formats: [frames[0].format])
        for frame in frames.prefix(3) { _ = try writer.append(frame) }
        var next = frames[4]
        next.decodeTime = .milliseconds(160)
        let fragment = try #require(try writer.fragment(before: next))
        let trun = Self.words(try #require(Self.boxes(fragment).first { $0.path == "moof/traf/trun" }).body)
        // sample_count 3; durations at words 3, 6, 9 (duration, size, flags each).
        #expect([trun[3], trun[6], trun[9]] == [3600, 3600, 7200])
    }
}
