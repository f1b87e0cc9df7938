import Foundation
import Testing
import H264
import H264TestSupport

@Suite(.ownThread) struct SyntaxFormatDescriptionTests {
    private func parameterSets(_ name: String) throws -> (sps: [[UInt8]], pps: [[UInt8]], probe: [String: Any]) {
        let units = ReferenceAnnexB.split(try TestFixtures.data("x264/\(name).264"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(TestFixtures.data("x264/\(name).json"))) as? [String: Any])
        return (units.filter { $0.first! & 0x1F == 7 }.map(Array.init), units.filter { $0.first! & 0x1F == 8 }.map(Array.init),
                try #require(json["ffprobe"] as? [String: Any]))
    }

    /// x264 --output-csp i422 --output-depth 10 (ffprobe: yuv422p10le, 80x44).
    @Test func highProfileExtensionComesFromTheSPS() throws {
        let (sps, pps, probe) = try parameterSets("high422_10bit_tff_80x44")
        let format = try FormatDescription(sequenceParameterSets: sps, pictureParameterSets: pps)
        let ext = try #require(format.configurationRecord.highProfileExtension)
        #expect(ext.chromaFormat == 2 && ext.bitDepthLumaMinus8 == 2 && ext.bitDepthChromaMinus8 == 2)
        #expect(format.dimensions.width == probe["width"] as? Int)
        #expect(format.dimensions.height == probe["height"] as? Int)
        #expect(format.sequenceParameterSet?.profileName == probe["profile"] as? String)
        // The extension survives the avcC round trip.
        let reparsed = try AVCDecoderConfigurationRecord(parsing: format.avcC)
        #expect(reparsed.highProfileExtension == ext)
    }

    @Test func unparsableSPSHasNoDimensions() throws {
        // A 4-byte SPS (header, profile_idc 100, flags, level_idc) that ends before seq_parameter_set_id.
        let format = try FormatDescription(sequenceParameterSets: [[0x67, 100, 0, 30]], pictureParameterSets: [[0x68, 0xCE]])
        #expect(format.sequenceParameterSet == nil)
        #expect(format.dimensions == (0, 0))
        #expect(format.configurationRecord.highProfileExtension?.chromaFormat == 1)
    }
}
