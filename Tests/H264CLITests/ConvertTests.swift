import Foundation
import Testing
import H264
import H264TestSupport

/// Runs `ffmpeg` (the reference decoder) over an Annex-B file; returns decoded frame count and
/// whatever FFmpeg printed at level error.
func ffmpegDecode(_ path: String) throws -> (frames: Int, errors: String) {
    let output = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", path, "-f", "framemd5", "-"])
    let frames = String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count
    return (frames, output.stderr + (output.status == 0 ? "" : "ffmpeg exit \(output.status)"))
}

@Suite(.ownThread, .timeLimit(.minutes(5))) struct ConvertCommandTests {
    static let streams = ["SVA_BA2_D.264", "CABA2_SVA_B.264", "HCAFF1_HHI.264", "FRExt3_Panasonic.avc"]

    /// Annex-B → AVCC (in-band) → Annex-B keeps every NAL unit byte for byte, at each length size.
    @Test(arguments: streams, [2, 4])
    func inBandRoundTripKeepsEveryNALUnit(stream: String, lengthSize: Int) throws {
        let dir = try CLI.temporaryDirectory()
        let input = try TestFixtures.path("conformance/\(stream)")
        let avcc = dir.appendingPathComponent("x.avcc").path
        let back = dir.appendingPathComponent("x.264").path
        var result = try CLI.run(["convert", "--to", "avcc", "--length-size", String(lengthSize), input, "-o", avcc])
        #expect(result.status == 0, "\(result.stderr)")
        result = try CLI.run(["convert", "--to", "annexb", "--length-size", String(lengthSize), avcc, "-o", back])
        #expect(result.status == 0, "\(result.stderr)")
        let original = try TestFixtures.data("conformance/\(stream)")
        let converted = [UInt8](try Data(contentsOf: URL(fileURLWithPath: back)))
        #expect(AnnexB.nalUnits(in: converted).map { converted[$0.range] } == AnnexB.nalUnits(in: original).map { original[$0.range] })
    }

    /// Parameter sets moved into an avcC come back before the IDR pictures, and FFmpeg decodes the
    /// result with no error and every frame.
    @Test(arguments: streams)
    func configurationRoundTripDecodes(stream: String) throws {
        let dir = try CLI.temporaryDirectory()
        let input = try TestFixtures.path("conformance/\(stream)")
        let avcc = dir.appendingPathComponent("x.avcc").path
        let config = dir.appendingPathComponent("x.avcC").path
        let back = dir.appendingPathComponent("x.264").path
        var result = try CLI.run(["convert", "--to", "avcc", "--parameter-sets", "config", "--config-out", config, input, "-o", avcc])
        #expect(result.status == 0, "\(result.stderr)")
        let avccBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: avcc)))
        let types = try AVCC.nalUnits(in: avccBytes, lengthSize: 4).map { avccBytes[$0.lowerBound] & 0x1F }
        // The first SPS/PPS moved out; only in-stream updates (same id, other content) remain.
        let original = try TestFixtures.data("conformance/\(stream)")
        let originalTypes = AnnexB.nalUnits(in: original).map { original[$0.range.lowerBound] & 0x1F }
        #expect(types.count { $0 == 7 || $0 == 8 } < originalTypes.count { $0 == 7 || $0 == 8 })
        #expect(types.count { $0 != 7 && $0 != 8 } == originalTypes.count { $0 != 7 && $0 != 8 })
        let record = try AVCDecoderConfigurationRecord(parsing: try Data(contentsOf: URL(fileURLWithPath: config)))
        #expect(!record.sequenceParameterSets.isEmpty && !record.pictureParameterSets.isEmpty)

        result = try CLI.run(["convert", "--to", "annexb", "--config", config, avcc, "-o", back])
        #expect(result.status == 0, "\(result.stderr)")
        let reference = try ffmpegDecode(input)
        let decoded = try ffmpegDecode(back)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.frames == reference.frames)
        #expect(decoded.frames > 0)
    }

    /// The AVCC sample (a raw length-prefixed stream) converts to a stream FFmpeg decodes.
    @Test func avccSampleConvertsToPlayableAnnexB() throws {
        let dir = try CLI.temporaryDirectory()
        let input = try TestFixtures.path("avcc/mp4ff_two_frames_avcc_len4.264")
        let out = dir.appendingPathComponent("two.264").path
        let result = try CLI.run(["convert", "--to", "annexb", "--length-size", "4", input, "-o", out])
        #expect(result.status == 0, "\(result.stderr)")
        let decoded = try ffmpegDecode(out)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.frames == 2)
        let inspect = try CLI.run(["inspect", "--json", "--length-size", "4", input])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(try ExpectedStream.parse(inspect.stdout).accessUnits.filter { $0.nalTypes.contains(5) || $0.nalTypes.contains(1) }.count == 2)
    }

    @Test func lengthPastTheEndIsOneLineWithOffset() throws {
        let dir = try CLI.temporaryDirectory()
        let file = dir.appendingPathComponent("bad.avcc")
        // One good NAL unit (length 2), then a length of 1000 with 3 bytes behind it.
        try Data([0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0x03, 0xE8, 0x65, 0x88, 0x84]).write(to: file)
        let result = try CLI.run(["convert", "--to", "annexb", "--length-size", "4", file.path, "-o", dir.appendingPathComponent("o").path])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains(file.path))
        #expect(result.stderr.contains("byte 6"))
        #expect(result.stderr.contains("lengthPastEnd"))
    }

    @Test func configModeNeedsConfigOut() throws {
        let input = try TestFixtures.path("conformance/CABA2_SVA_B.264")
        let result = try CLI.run(["convert", "--to", "avcc", "--parameter-sets", "config", input, "-o", "/dev/null"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--config-out"))
    }
}
