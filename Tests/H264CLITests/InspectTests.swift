import Foundation
import Testing
import H264TestSupport

@Suite(.ownThread, .timeLimit(.minutes(5))) struct InspectCommandTests {
    /// `h264 inspect --json` equals FFmpeg's reading: access-unit cuts, NAL types, every SPS/PPS
    /// syntax element — on all 63 conformance streams.
    @Test(arguments: TestFixtures.conformanceStreams)
    func jsonMatchesFFmpeg(stream: String) throws {
        let path = try TestFixtures.path("conformance/\(stream)")
        let result = try CLI.run(["inspect", "--json", path])
        #expect(result.status == 0, "\(result.stderr)")
        let got = try ExpectedStream.parse(result.stdout)
        let want = try ExpectedStream.load(stream)
        #expect(got.accessUnits == want.accessUnits)
        #expect(got.sps == want.sps)
        #expect(got.pps == want.pps)
        // Offsets partition the file.
        let object = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let units = object?["access_units"] as? [[String: Any]] ?? []
        var offset = 0
        for unit in units {
            #expect(unit["offset"] as? Int == offset)
            offset += unit["bytes"] as? Int ?? 0
        }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(offset == size)
    }

    /// An H.265 stream, told from its NAL headers: `inspect --json` gives FFmpeg's VPS, SPS and
    /// PPS element by element and its access units' NAL types, the offsets partitioning the
    /// file — on all 12 shared streams; the table names the H.265 types and the SPS.
    @Test(arguments: TestFixtures.hevcStreams)
    func hevcJSONMatchesFFmpeg(stream: String) throws {
        let path = try TestFixtures.path("hevc/\(stream)")
        let result = try CLI.run(["inspect", "--json", path])
        #expect(result.status == 0, "\(result.stderr)")
        let got = try ExpectedStream.parse(result.stdout)
        let want = try ExpectedStream.loadHEVC(stream)
        #expect(got.vps == want.vps && !got.vps.isEmpty)
        #expect(got.sps == want.sps)
        #expect(got.pps == want.pps)
        #expect(got.accessUnits.map(\.nalTypes) == want.accessUnits.map(\.nalTypes))
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(got.accessUnits.reduce(0) { $0 + $1.bytes } == size)
        let table = try CLI.run(["inspect", path]).stdoutText
        #expect(table.contains("H.265: ") && table.contains("VPS_NUT") && table.contains("SPS 0: "), "\(table)")
    }

    @Test func tableListsNALUnitsAndParameterSets() throws {
        let path = try TestFixtures.path("conformance/FRExt3_Panasonic.avc")
        let result = try CLI.run(["inspect", path])
        #expect(result.status == 0)
        let text = result.stdoutText
        #expect(text.contains("Sequence parameter set"))
        #expect(text.contains("Coded slice of an IDR picture"))
        #expect(text.contains("SPS 0: High"))
        #expect(text.contains("PPS 0"))
        #expect(text.contains("CABAC") || text.contains("CAVLC"))
    }

    @Test func readsStandardInput() throws {
        let data = try Data(TestFixtures.data("conformance/CABA2_SVA_B.264"))
        let viaFile = try CLI.run(["inspect", "--json", try TestFixtures.path("conformance/CABA2_SVA_B.264")])
        let viaStdin = try CLI.run(["inspect", "--json", "-"], stdin: data)
        #expect(viaStdin.status == 0)
        #expect(viaStdin.stdout == viaFile.stdout)
    }

    /// A damaged SPS is skipped and reported as one warning line with file and offset (exit 0);
    /// `--strict` makes it an error (exit 1), in the same format.
    @Test func damagedUnitIsOneLineWithFileAndOffset() throws {
        let dir = try CLI.temporaryDirectory()
        // A valid start, then an SPS whose seq_parameter_set_id is out of range (ue = 32).
        let bad: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0x00, 0x1E, 0b0000_0100, 0b0010_0000, 0x80]
        let file = dir.appendingPathComponent("bad.264")
        try Data(bad).write(to: file)
        for strict in [false, true] {
            let result = try CLI.run(["inspect"] + (strict ? ["--strict"] : []) + [file.path])
            #expect(result.status == (strict ? 1 : 0))
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.first?.hasPrefix(strict ? "h264 inspect: error: " : "h264 inspect: warning: ") == true, "\(result.stderr)")
            #expect(result.stderr.contains(file.path))
            #expect(result.stderr.contains("byte 4"))
            #expect(result.stderr.contains("valueOutOfRange in seq_parameter_set_id"))
        }
    }

    @Test func missingFileFails() throws {
        let result = try CLI.run(["inspect", "/nonexistent/x.264"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent/x.264"))
    }

    @Test func garbageWithoutStartCodeFails() throws {
        let result = try CLI.run(["inspect", "-"], stdin: Data([0x12, 0x34, 0x56, 0x78, 0x9A]))
        #expect(result.status == 1)
        #expect(result.stderr.contains("byte 0"))
    }
}
