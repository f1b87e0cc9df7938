import Foundation
import Testing
import H264
import H264TestSupport

/// `h264 inspect` and `h264 convert` read streams with tolerable values and damaged units: each
/// warning once on standard error in the format of errors, exit status 0; `--strict` makes them
/// errors (exit status 1).
@Suite(.ownThread, .timeLimit(.minutes(5))) struct DiagnosticsTests {
    /// SPS with `log2_max_mv_length_horizontal` = 16 (2003/2005 editions), PPS, IDR, P, and the
    /// SPS again before a second IDR: the warning is printed once.
    static let tolerantStream: [UInt8] = [
        SyntheticStream.sps(vui: SyntheticStream.bitstreamRestrictionVUI(log2MaxMvLengthHorizontal: 16)),
        SyntheticStream.pps(), SyntheticStream.slice(idr: true), SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
        SyntheticStream.sps(vui: SyntheticStream.bitstreamRestrictionVUI(log2MaxMvLengthHorizontal: 16)),
        SyntheticStream.slice(idr: true, idrPicId: 1),
    ].flatMap { AnnexB.fourByteStartCode + $0 }

    static func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let file = try CLI.temporaryDirectory().appendingPathComponent(name)
        try Data(bytes).write(to: file)
        return file.path
    }

    /// The warning's bit offset: where the SPS parser finds the value.
    static func warning() throws -> MediaError {
        let sps = try SequenceParameterSet(nalUnit: SyntheticStream.sps(vui: SyntheticStream.bitstreamRestrictionVUI(log2MaxMvLengthHorizontal: 16)))
        return try #require(sps.diagnostics.first)
    }

    @Test func inspectWarnsOnceAndExitsZero() throws {
        let path = try Self.write(Self.tolerantStream, "tolerant.264")
        let warning = try Self.warning()
        let result = try CLI.run(["inspect", path])
        #expect(result.status == 0, "\(result.stderr)")
        // byte 4: the SPS's header byte; the bit offset counts from it.
        #expect(result.stderr == "h264 inspect: warning: \(path): byte 4: valueOutOfRange in log2_max_mv_length_horizontal "
                + "(bit \(warning.bitOffset ?? -1)): 16 is outside 0...15 (kept)\n")
        #expect(result.stdoutText.contains("3 access units"))

        let strict = try CLI.run(["inspect", "--strict", path])
        #expect(strict.status == 1)
        #expect(strict.stderr == result.stderr.replacingOccurrences(of: ": warning: ", with: ": error: "))
    }

    @Test func inspectJSONCarriesTheDiagnostics() throws {
        let path = try Self.write(Self.tolerantStream, "tolerant.264")
        let result = try CLI.run(["inspect", "--json", path])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let diagnostics = try #require(object?["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?["kind"] as? String == "warning")
        #expect(diagnostics.first?["code"] as? String == "valueOutOfRange")
        #expect(diagnostics.first?["field"] as? String == "log2_max_mv_length_horizontal")
        #expect(diagnostics.first?["byte_offset"] as? Int == 4)
        #expect(diagnostics.first?["bit_offset"] as? Int == (try Self.warning()).bitOffset)
        #expect((object?["access_units"] as? [Any])?.count == 3)
    }

    @Test func convertWarnsOnceWritesTheStreamAndStrictWritesNothing() throws {
        let path = try Self.write(Self.tolerantStream, "tolerant.264")
        let dir = try CLI.temporaryDirectory()
        let avcc = dir.appendingPathComponent("out.avcc").path
        let config = dir.appendingPathComponent("out.avcC").path
        let result = try CLI.run(["convert", "--to", "avcc", "--parameter-sets", "config", "--config-out", config, path, "-o", avcc])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.hasPrefix("h264 convert: warning: \(path): byte 4: valueOutOfRange in log2_max_mv_length_horizontal"))
        let record = try AVCDecoderConfigurationRecord(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: config))))
        #expect(record.sequenceParameterSets.count == 1)

        let strictOut = dir.appendingPathComponent("strict.avcc").path
        let strict = try CLI.run(["convert", "--to", "avcc", "--strict", path, "-o", strictOut])
        #expect(strict.status == 1)
        #expect(strict.stderr.hasPrefix("h264 convert: error: \(path): byte 4: "))
        #expect(!FileManager.default.fileExists(atPath: strictOut))
    }

    /// BA_MW_D.264 with forbidden_zero_bit set on the slice of access unit 50: `h264 inspect`
    /// reports it once and reads every other access unit as FFmpeg reads the undamaged stream;
    /// ffprobe, given the same damaged file, decodes the same 99 pictures and cuts the same
    /// packets around the damaged one.
    @Test func damagedConformanceStreamIsReadAroundTheDamageLikeFFprobe() throws {
        var bytes = try TestFixtures.data("conformance/BA_MW_D.264")
        let want = try ExpectedStream.load("BA_MW_D.264")
        let start = want.accessUnits[..<50].reduce(0) { $0 + $1.bytes }
        let location = try #require(AnnexB.nalUnits(in: bytes).first { $0.startCodeOffset == start })
        bytes[location.range.lowerBound] |= 0x80
        let path = try Self.write(bytes, "damaged.264")

        let result = try CLI.run(["inspect", "--json", path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("h264 inspect: warning: \(path): byte \(location.range.lowerBound): forbiddenZeroBit in forbidden_zero_bit") == true)
        let got = try ExpectedStream.parse(result.stdout)
        var wantUnits = want.accessUnits
        let lost = wantUnits.remove(at: 50)
        wantUnits[49].bytes += lost.bytes
        #expect(got.accessUnits == wantUnits)
        #expect(got.sps == want.sps)

        // `h264 convert` carries every NAL unit over, the damaged one included, and warns the same way.
        let avcc = try CLI.temporaryDirectory().appendingPathComponent("damaged.avcc").path
        let converted = try CLI.run(["convert", "--to", "avcc", path, "-o", avcc])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.stderr == result.stderr.replacingOccurrences(of: "h264 inspect:", with: "h264 convert:"))
        let avccBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: avcc)))
        #expect(try AVCC.nalUnits(in: avccBytes, lengthSize: 4).map { Array(avccBytes[$0]) }
                == AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) })

        let probe = try Subprocess.run("ffprobe", ["-v", "quiet", "-count_frames", "-select_streams", "v", "-show_entries",
                                                   "stream=nb_read_frames:packet=size", "-of", "csv=p=0", path])
        let rows = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let packetSizes = rows.dropLast().compactMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }
        let frames = rows.last.flatMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }
        #expect(frames == got.accessUnits.count, "ffprobe decodes as many pictures as we read access units")
        // ffprobe keeps the damaged unit as a packet of its own; around it, the same cuts.
        #expect(packetSizes.count == want.accessUnits.count)
        if packetSizes.count == want.accessUnits.count {
            #expect(Array(packetSizes[..<49]) == got.accessUnits[..<49].map(\.bytes))
            #expect(Array(packetSizes[51...]) == got.accessUnits[50...].map(\.bytes))
            #expect(packetSizes[49] + packetSizes[50] == got.accessUnits[49].bytes)
        }
    }
}
