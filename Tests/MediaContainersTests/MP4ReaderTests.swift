import H264
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// ``MP4Reader`` on files built byte by byte (``MP4ReaderTestFile``): the samples come back as
/// written, each box-size form (32-bit, 64-bit `largesize`, 0 to the end) reads the same, and
/// every malformed input is an error with its code and field — or a clamp with a warning —
/// never a crash, a hang or an allocation sized by a count field.
@Suite(.ownThread) struct MP4ReaderTests {
    typealias F = MP4ReaderTestFile

    static func frames(_ bytes: [UInt8]) throws -> (frames: [MP4Frame], warnings: [MediaError]) {
        var reader = try MP4Reader(bytes)
        var frames: [MP4Frame] = []
        while let frame = try reader.next() { frames.append(frame) }
        return (frames, reader.warnings)
    }

    @Test func samplesComeBackAsWritten() throws {
        let file = try F.fixture()
        let (frames, warnings) = try Self.frames(file.bytes)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(frames.map(\.data) == file.samples)
        #expect(frames.map(\.decodeTimestamp) == (0..<file.samples.count).map { Int64($0 * 512) })
        #expect(frames.map(\.isKeyframe) == file.samples.indices.map { $0 == 0 })
        #expect(frames[1].frame.decodeTime == .milliseconds(40))
        #expect(frames.allSatisfy { $0.frame.videoFormat?.codec == .h264 })
    }

    @Test(arguments: ["largesize", "size 0"]) func boxSizeFormsReadTheSame(_ form: String) throws {
        var file = try F.fixture()
        if form == "largesize" { file.largeMdat = true } else { file.mdatToEnd = true }
        let (frames, warnings) = try Self.frames(file.bytes)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(frames.map(\.data) == file.samples)
    }

    /// `co64` chunk offsets and `stz2` 16-bit sample sizes read as `stco` and `stsz` do.
    @Test(arguments: ["co64", "stz2"]) func tableFormsReadTheSame(_ form: String) throws {
        var file = try F.fixture()
        if form == "co64" { file.largeChunkOffsets = true } else { file.compactSizes = true }
        let (frames, warnings) = try Self.frames(file.bytes)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(frames.map(\.data) == file.samples)
    }

    /// Annex-B inside the samples (start codes where lengths belong): read, converted to 4-byte
    /// lengths, and reported.
    @Test func annexBInsideSamplesIsConverted() throws {
        var file = try F.fixture()
        let lengthPrefixed = file.samples
        file.samples = try lengthPrefixed.map { sample in
            try AVCC.nalUnits(in: sample, lengthSize: 4).flatMap { [0, 0, 0, 1] + sample[$0] }
        }
        let (frames, warnings) = try Self.frames(file.bytes)
        #expect(frames.map(\.data) == lengthPrefixed)
        #expect(warnings.contains { $0.code == .unexpectedStartCode })
    }

    static let malformed: [MalformedCase] = [
        MalformedCase("a file of 5 bytes", .truncated, field: "size") { _ = try MP4Reader([0, 0, 0, 8, 0x66]) },
        MalformedCase("a first box smaller than its header", .mp4BoxSizeInvalid, field: "ftyp") {
            _ = try MP4Reader(F.be32(4) + Array("ftyp".utf8) + [0, 0, 0, 0])
        },
        MalformedCase("a file cut inside moov", .mp4BoxSizeInvalid, field: "moov") {
            let bytes = try F.fixture().bytes
            _ = try MP4Reader(Array(bytes.dropLast(10)))
        },
        MalformedCase("no moov", .mp4MissingBox, field: "moov") {
            _ = try MP4Reader(F.box("ftyp", Array("isom".utf8) + F.be32(0)) + F.box("mdat", [1, 2, 3]))
        },
        MalformedCase("a child past its parent's end", .mp4BoxSizeInvalid, field: "junk") {
            var file = try F.fixture()
            file.extraTableBoxes = F.be32(4096) + Array("junk".utf8)
            _ = try MP4Reader(file.bytes)
        },
        MalformedCase("a child whose size is below 8", .mp4BoxSizeInvalid, field: "junk") {
            var file = try F.fixture()
            file.extraTableBoxes = F.be32(3) + Array("junk".utf8)
            _ = try MP4Reader(file.bytes)
        },
        MalformedCase("a 64-bit size past the end", .mp4BoxSizeInvalid, field: "junk") {
            var file = try F.fixture()
            file.extraTableBoxes = F.be32(1) + Array("junk".utf8) + F.be64(1 << 40)
            _ = try MP4Reader(file.bytes)
        },
        MalformedCase("stsz sample_count 2^32-1 with per-sample sizes", .truncated, field: "sample_count") {
            var file = try F.fixture()
            file.stszBody = F.be32(0) + F.be32(0xFFFF_FFFF) + F.be32(10)
            _ = try MP4Reader(file.bytes)
        },
        MalformedCase("stsc entry_count 2^32-1", .truncated, field: "entry_count") {
            var file = try F.fixture()
            file.stsc = []
            var bytes = file.bytes
            let at = try #require(Self.find("stsc", in: bytes))
            bytes.replaceSubrange(at + 12..<at + 16, with: F.be32(0xFFFF_FFFF))
            _ = try MP4Reader(bytes)
        },
        MalformedCase("an avc1 without avcC", .mp4MissingBox, field: "avcC") {
            var file = try F.fixture()
            file.avcC = []
            var bytes = file.bytes
            let at = try #require(Self.find("avcC", in: bytes))
            bytes.replaceSubrange(at + 4..<at + 8, with: Array("xxxx".utf8))
            let reader = try MP4Reader(bytes)
            throw try #require(reader.warnings.first)
        },
    ]

    /// The offset of the first box of `type` (its size field).
    static func find(_ type: String, in bytes: [UInt8]) -> Int? {
        let pattern = Array(type.utf8)
        guard bytes.count >= 8 else { return nil }
        return (4...(bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual(pattern) }.map { $0 - 4 }
    }

    @Test(arguments: malformed) func malformedInputIsRejected(_ testCase: MalformedCase) {
        testCase.expectRejected()
    }

    /// `stsz` with one size for 2³²−1 samples: clamped to what the file can hold, with a warning,
    /// without reserving 2³² entries.
    @Test func hugeConstantSampleCountIsClamped() throws {
        var file = try F.fixture()
        file.stszBody = F.be32(1) + F.be32(0xFFFF_FFFF)
        file.stsc = [(1, 0xFFFF_FFFF, 1)]
        let bytes = file.bytes
        var reader = try MP4Reader(bytes)
        #expect(reader.tracks[0].samples.count <= bytes.count)
        #expect(reader.warnings.contains { $0.code == .mp4SampleTableInconsistent && $0.field == "sample_count" })
        var count = 0
        while try reader.next() != nil { count += 1 }
        #expect(count <= bytes.count)
        // One-byte samples are no NAL units: each a warning, the list bounded.
        #expect(reader.warnings.count <= MP4Reader.warningLimit + 5 && reader.suppressedWarningCount > 0)
    }

    /// `stsc` entries that go backwards or repeat (a "loop"): read without hanging, each chunk
    /// once, the samples no table places reported.
    @Test(arguments: [[(3, 1, 1), (1, 2, 1), (2, 5, 1)], [(1, 2, 1), (1, 3, 1), (1, 4, 1)], [(0, 1, 1)], [(5, 1, 1)]])
    func inconsistentSampleToChunkEntriesEnd(_ entries: [(Int, Int, Int)]) throws {
        var file = try F.fixture()
        file.stsc = entries
        let (frames, warnings) = try Self.frames(file.bytes)
        #expect(frames.count <= file.samples.count)
        if frames.count < file.samples.count { #expect(!warnings.isEmpty) }
    }

    /// Zero-size boxes: an empty `free` at the top level and an empty box in `stbl` are skipped.
    @Test func emptyBoxesAreSkipped() throws {
        var file = try F.fixture()
        file.extraTableBoxes = F.box("free", [])
        let bytes = file.bytes + F.box("free", [])
        let (frames, warnings) = try Self.frames(bytes)
        #expect(frames.count == file.samples.count)
        #expect(warnings.isEmpty, "\(warnings)")
    }

    /// A file cut inside `mdat` (moov first): the samples that are whole are read, the rest
    /// reported.
    @Test func cutOffMdatKeepsWholeSamples() throws {
        var file = try F.fixture()
        file.mdatToEnd = true // moov first, mdat last
        let bytes = file.bytes
        let cut = Array(bytes.dropLast(file.samples.last!.count + 5))
        let (frames, warnings) = try Self.frames(cut)
        #expect(frames.count == file.samples.count - 2)
        #expect(warnings.contains { $0.code == .mp4SamplePastEnd })
    }

    /// Every single-byte change of a small file, and every cut: an error or frames, never a trap
    /// or a hang (a cheap, deterministic stand-in for the fuzz target).
    @Test func mutationsNeverTrap() throws {
        let bytes = try F.fixture().bytes
        var random = SplitMix64(seed: 36)
        for _ in 0..<3000 {
            var mutated = bytes
            let at = Int(random.next() % UInt64(bytes.count))
            mutated[at] = UInt8(truncatingIfNeeded: random.next())
            if random.next() % 8 == 0 { mutated = Array(mutated.prefix(Int(random.next() % UInt64(bytes.count)))) }
            if var reader = try? MP4Reader(mutated) {
                var count = 0
                while let _ = try? reader.next(), count < 100_000 { count += 1 }
            }
        }
    }
}
