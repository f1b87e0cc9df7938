import H264
import H264TestSupport
import MediaCore

/// Small MP4 files built byte by byte for the reader's unit and malformed-input tests: `ftyp`,
/// `mdat` (the samples, one chunk), then `moov` with one H.264 track (so chunk offsets are known
/// before `moov` is written). Each table can be replaced to make the file wrong in one place.
struct MP4ReaderTestFile {
    var samples: [[UInt8]]
    var avcC: [UInt8]
    var syncSamples: [Int]? = [1]
    var timescale = 12_800
    var delta = 512
    /// Replaces the `stsc` entries (first_chunk, samples_per_chunk, sample_description_index).
    var stsc: [(Int, Int, Int)]?
    /// Replaces `stsz`'s payload after version and flags.
    var stszBody: [UInt8]?
    /// `mdat` with `size` 1 and a 64-bit `largesize`.
    var largeMdat = false
    /// `mdat` (then last) with `size` 0: to the end of the file.
    var mdatToEnd = false
    /// `co64` instead of `stco`.
    var largeChunkOffsets = false
    /// `stz2` with 16-bit sizes instead of `stsz`.
    var compactSizes = false
    /// Extra boxes inside `stbl`.
    var extraTableBoxes: [UInt8] = []

    /// The fixture's H.264 pictures as 4-byte-length samples, and its avcC.
    static func fixture() throws -> MP4ReaderTestFile {
        let units = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("flv/x264_bframes_320x192_9f.264")).filter(\.hasPicture)
        let format = units.first!.formatDescription!
        let samples = units.map { unit in unit.nalUnits.flatMap { be32($0.count) + Array($0) } }
        return MP4ReaderTestFile(samples: samples, avcC: VideoFormatDescription.h264(format).configurationRecordBytes)
    }

    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
    static func be64(_ value: Int) -> [UInt8] { be32(value >> 32) + be32(value) }
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + Array(type.utf8) + payload }
    static func full(_ type: String, version: UInt8 = 0, flags: Int = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version] + be32(flags).dropFirst() + payload)
    }

    /// The file's bytes.
    var bytes: [UInt8] {
        typealias F = MP4ReaderTestFile
        let ftyp = F.box("ftyp", Array("isom".utf8) + F.be32(512) + Array("isomavc1".utf8))
        let media = samples.flatMap { $0 }
        let mdatHeader = largeMdat ? F.be32(1) + Array("mdat".utf8) + F.be64(16 + media.count)
            : F.be32(mdatToEnd ? 0 : 8 + media.count) + Array("mdat".utf8)
        let mdat = mdatHeader + media
        if mdatToEnd {
            let moov = movie(chunkOffset: 0)
            return ftyp + movie(chunkOffset: ftyp.count + moov.count + 8) + mdat
        }
        return ftyp + mdat + movie(chunkOffset: ftyp.count + mdatHeader.count)
    }

    /// The `moov`, its one chunk at `chunkOffset`.
    func movie(chunkOffset: Int) -> [UInt8] {
        typealias F = MP4ReaderTestFile
        let count = samples.count
        let stsd = F.full("stsd", F.be32(1) + F.box("avc1", [UInt8](repeating: 0, count: 6) + F.be16(1) + [UInt8](repeating: 0, count: 16)
            + F.be16(320) + F.be16(192) + F.be32(0x48_0000) + F.be32(0x48_0000) + F.be32(0) + F.be16(1)
            + [UInt8](repeating: 0, count: 32) + F.be16(24) + F.be16(0xFFFF) + F.box("avcC", avcC)))
        let stts = F.full("stts", F.be32(1) + F.be32(count) + F.be32(delta))
        let stss = syncSamples.map { F.full("stss", F.be32($0.count) + $0.flatMap { F.be32($0) }) } ?? []
        let stscEntries = stsc ?? [(1, count, 1)]
        let stscBox = F.full("stsc", F.be32(stscEntries.count) + stscEntries.flatMap { F.be32($0.0) + F.be32($0.1) + F.be32($0.2) })
        let stsz = compactSizes ? F.full("stz2", F.be32(16) + F.be32(count) + samples.flatMap { F.be16($0.count) })
            : F.full("stsz", stszBody ?? (F.be32(0) + F.be32(count) + samples.flatMap { F.be32($0.count) }))
        let stco = largeChunkOffsets ? F.full("co64", F.be32(1) + F.be64(chunkOffset)) : F.full("stco", F.be32(1) + F.be32(chunkOffset))
        let stbl = F.box("stbl", stsd + stts + stss + stscBox + stsz + stco + extraTableBoxes)
        let minf = F.box("minf", stbl)
        let mdhd = F.full("mdhd", F.be32(0) + F.be32(0) + F.be32(timescale) + F.be32(count * delta) + F.be32(0))
        let hdlr = F.full("hdlr", F.be32(0) + Array("vide".utf8) + [UInt8](repeating: 0, count: 12) + [0])
        let tkhd = F.full("tkhd", flags: 3, F.be32(0) + F.be32(0) + F.be32(1) + [UInt8](repeating: 0, count: 72))
        let trak = F.box("trak", tkhd + F.box("mdia", mdhd + hdlr + minf))
        let mvhd = F.full("mvhd", F.be32(0) + F.be32(0) + F.be32(1000) + F.be32(0) + [UInt8](repeating: 0, count: 80))
        return F.box("moov", mvhd + trak)
    }
}
