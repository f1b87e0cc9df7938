import Foundation
import Testing
import H264
import H264TestSupport

/// An AVCC sample file whose samples are Annex-B — what Chrome's MediaRecorder writes into
/// MP4/Matroska — against FFmpeg: the MP4 is FFmpeg's own (`-c copy` of a conformance stream),
/// its samples rewritten in place so that each 4-byte length becomes `00 00 00 01`.
///
/// FFmpeg's `h264_mp4toannexb` (5.1 here, and its current source) drops such samples: it reads
/// the start code as a length. Its decoder reads them as Annex-B. So the reference for the NAL
/// units is the filter's output for the same access units in their AVCC form, and the reference
/// for the pictures is FFmpeg's decoder: it reads the rewritten MP4 as the original, and our
/// Annex-B as the stream the MP4 was made from.
///
/// FFmpeg 5.1's filter inserts the avcC's SPS and PPS only before the first IDR picture that
/// lacks them when the first one carried its own (a later IDR after non-IDR slices gets none;
/// its current source, and this package, insert them before every IDR picture that lacks them).
/// So the filter is the reference for a stream whose every IDR picture carries its parameter sets
/// (`FRExt1_Panasonic.avc`); for `MIDR_MW_D.264` (a second IDR picture without them, and NAL
/// units of 256–511 bytes whose lengths read `00 00 01 xx`) the reference is the conversion of
/// the same samples in AVCC form, and FFmpeg's decoded pictures.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct AnnexBSampleFileTests {

    /// The payload of the first box named `type` in `bytes` (boxes searched by their name; the
    /// size is the 4 bytes before it).
    static func box(_ type: String, in bytes: [UInt8]) throws -> Range<Int> {
        let name = Array(type.utf8)
        let at = try #require((4..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(name) }, "no \(type) box")
        let size = bytes[(at - 4)..<at].reduce(0) { $0 << 8 | Int($1) }
        return (at + 4)..<(at - 4 + size)
    }

    static func framemd5(_ arguments: [String]) throws -> [Substring] {
        let run = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error"] + arguments + ["-f", "framemd5", "-"])
        #expect(run.status == 0, "\(run.stderr)")
        return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
    }

    static func nalUnits(_ annexB: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnits(in: annexB).map { Array(annexB[$0.range]) }
    }

    @Test(arguments: [("conformance/FRExt1_Panasonic.avc", true), ("conformance/MIDR_MW_D.264", false)])
    func annexBSamplesConvertToFFmpegsNALUnits(stream: String, filterIsReference: Bool) throws {
        let dir = try CLI.temporaryDirectory()
        let mp4Path = dir.appendingPathComponent("avcc.mp4").path
        let made = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", try TestFixtures.path(stream),
                                                 "-c", "copy", mp4Path])
        #expect(made.status == 0, "\(made.stderr)")
        let mp4 = [UInt8](try Data(contentsOf: URL(fileURLWithPath: mp4Path)))
        let record = try AVCDecoderConfigurationRecord(parsing: Array(mp4[try Self.box("avcC", in: mp4)]))
        #expect(record.nalUnitLengthSize == 4)

        // The samples, in the one mdat, by the sizes ffprobe reads from the sample table.
        let probe = try Subprocess.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=size",
                                                   "-of", "csv=p=0", mp4Path])
        let sizes = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }
        let mdat = try Self.box("mdat", in: mp4)
        #expect(sizes.count > 5 && sizes.reduce(0, +) == mdat.count)
        var patched = mp4
        var samples: [[UInt8]] = []
        var avccSamples: [[UInt8]] = []
        var offset = mdat.lowerBound
        for size in sizes {
            var sample = Array(mp4[offset..<(offset + size)])
            avccSamples.append(sample)
            try AnnexB.convertAVCCInPlace(&sample)
            #expect(Array(sample.prefix(4)) == [0, 0, 0, 1])
            patched.replaceSubrange(offset..<(offset + size), with: sample)
            samples.append(sample)
            offset += size
        }
        let patchedPath = dir.appendingPathComponent("annexb-samples.mp4").path
        try Data(patched).write(to: URL(fileURLWithPath: patchedPath))

        // FFmpeg's h264_mp4toannexb on the same access units in AVCC form, or their conversion.
        let filtered = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", mp4Path, "-c", "copy", "-f", "h264", "-"])
        #expect(filtered.status == 0, "\(filtered.stderr)")
        let ofAVCC = Self.nalUnits(try avccSamples.flatMap { try AnnexB.fromAVCC($0, lengthSize: 4, parameterSets: record) })
        if filterIsReference { #expect(ofAVCC == Self.nalUnits(filtered.stdout)) }
        let reference = ofAVCC
        #expect(reference.count > 15)

        // Sample by sample, and as a raw sample file, in the library.
        let bySample = try samples.flatMap { try AnnexB.fromAVCC($0, lengthSize: 4, parameterSets: record) }
        #expect(Self.nalUnits(bySample) == reference)
        let file = samples.flatMap { $0 }
        let reading = try AVCC.read(file, lengthSize: 4)
        #expect(reading.warnings.map(\.code) == [.unexpectedStartCode] && reading.annexBOffset == 0)
        #expect(Self.nalUnits(try AnnexB.fromAVCCStream(file, lengthSize: 4, parameterSets: record)) == reference)

        // Through `h264 convert`, with the avcC: one warning line, the same NAL units.
        let filePath = dir.appendingPathComponent("samples.avcc").path
        let configPath = dir.appendingPathComponent("samples.avcC").path
        let outPath = dir.appendingPathComponent("out.h264").path
        try Data(file).write(to: URL(fileURLWithPath: filePath))
        try Data(try record.serialized()).write(to: URL(fileURLWithPath: configPath))
        let converted = try CLI.run(["convert", "--to", "annexb", filePath, "--config", configPath, "-o", outPath])
        #expect(converted.status == 0, "\(converted.stderr)")
        let warnings = converted.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 1 && warnings.first?.contains("unexpectedStartCode") == true, "\(converted.stderr)")
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: outPath)))
        #expect(Self.nalUnits(written) == reference)
        let strict = try CLI.run(["convert", "--to", "annexb", filePath, "--config", configPath, "-o", outPath, "--strict"])
        #expect(strict.status == 1)

        // FFmpeg's decoder reads the rewritten MP4 as the original one, and our Annex-B as the
        // stream the MP4 was made from.
        let fromMP4 = try Self.framemd5(["-i", patchedPath])
        #expect(fromMP4.count > 5)
        #expect(fromMP4 == (try Self.framemd5(["-i", mp4Path])))
        #expect(try Self.framemd5(["-f", "h264", "-i", outPath]) == (try Self.framemd5(["-f", "h264", "-i", try TestFixtures.path(stream)])))
    }
}
