import Foundation
import Testing
import H264
import H264TestSupport

/// `h264 convert` of H.265, told from the NAL headers (`--to avcc`) or from the `hvcC`
/// (`--to annexb --config`): the round trip through HVCC gives FFmpeg's own frames.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCConvertTests {
    /// FFmpeg's per-frame MD5s of an H.265 Annex-B file (and what it printed at level error).
    static func frameMD5s(_ path: String) throws -> (md5s: [Substring], errors: String) {
        let output = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "hevc", "-i", path, "-f", "framemd5", "-"])
        let lines = String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        return (lines.compactMap { $0.split(separator: ",").last }, output.stderr + (output.status == 0 ? "" : "exit \(output.status)"))
    }

    /// Annex-B → HVCC with the parameter sets in the `hvcC` (or left in band) → Annex-B: FFmpeg
    /// decodes the result to the input's frames, with no error; the record is 1 VPS, SPS and PPS.
    @Test(arguments: ["main_gop_bframes_cra.265", "slices4_vui_hrd_aud.265", "main10_cropped.265"], ["config", "inband"])
    func roundTripDecodesToTheSameFrames(stream: String, placement: String) throws {
        let input = try TestFixtures.path("hevc/\(stream)")
        let dir = try CLI.temporaryDirectory()
        let hvcc = dir.appendingPathComponent("s.hvcc").path, record = dir.appendingPathComponent("s.hvcC").path
        let back = dir.appendingPathComponent("back.265").path
        let toHVCC = try CLI.run(["convert", "--to", "avcc", input, "-o", hvcc, "--config-out", record, "--parameter-sets", placement])
        #expect(toHVCC.status == 0, "\(toHVCC.stderr)")
        let toAnnexB = try CLI.run(["convert", "--to", "annexb", hvcc, "--config", record, "-o", back])
        // `h264 decode` reads the HVCC with its hvcC to FFmpeg's frames too.
        let decoded = try CLI.run(["decode", "--framemd5", "--quiet", hvcc, "--config", record])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let want = try Self.frameMD5s(input), got = try Self.frameMD5s(back)
        #expect(decoded.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last } == want.md5s)
        #expect(toAnnexB.status == 0, "\(toAnnexB.stderr)")
        #expect(got.errors.isEmpty, "\(got.errors)")
        #expect(!want.md5s.isEmpty && got.md5s == want.md5s)
        let inspected = try CLI.run(["inspect", "--json", back])
        let json = try ExpectedStream.parse(inspected.stdout)
        #expect(json.vps.count == 1 && json.sps.count == 1 && json.pps.count == 1)
        // In config mode the HVCC itself has no parameter set (types 32…34): they live in the record.
        let hvccBytes = try Array(Data(contentsOf: URL(fileURLWithPath: hvcc)))
        let types = try AVCC.nalUnits(in: hvccBytes, lengthSize: 4).map { (hvccBytes[$0.lowerBound] >> 1) & 0x3F }
        #expect(types.contains { (32...34).contains($0) } == (placement == "inband"))
    }

    /// H.265 with other than 4-byte lengths is refused in one line (an `avcC` as `--config`
    /// stays an H.264 conversion: ConvertTests).
    @Test func lengthSizeOtherThanFourIsRefused() throws {
        let input = try TestFixtures.path("hevc/tiny_16x16.265")
        let dir = try CLI.temporaryDirectory()
        let refused = try CLI.run(["convert", "--to", "avcc", input, "-o", dir.appendingPathComponent("x").path, "--length-size", "2"])
        #expect(refused.status == 1 && refused.stderr.contains("4-byte lengths"), "\(refused.stderr)")
    }
}
