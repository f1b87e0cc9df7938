import H264
import HEVC
import H264TestSupport
import Testing

/// `AnnexB.carriesHEVC`: how `h264 inspect` (and every command after it) tells H.265 from H.264
/// without a flag.
@Suite(.ownThread) struct HEVCDetectionTests {
    @Test func everySharedH265StreamIsHEVC() throws {
        for stream in TestFixtures.hevcStreams {
            #expect(AnnexB.carriesHEVC(try TestFixtures.data("hevc/\(stream)")), "\(stream)")
        }
    }

    /// None of the 63 H.264 conformance streams (every profile, fields, AUDs, SEI first) is.
    @Test func noH264ConformanceStreamIsHEVC() throws {
        for stream in TestFixtures.conformanceStreams {
            #expect(!AnnexB.carriesHEVC(try TestFixtures.data("conformance/\(stream)")), "\(stream)")
        }
    }

    /// Without all three parameter sets, or with a unit of another layer or temporal id 0 among
    /// the first, it is not told as H.265; garbage and an empty stream neither.
    @Test func needsParameterSetsAndBaseLayerHeaders() throws {
        let bytes = try TestFixtures.data("hevc/tiny_16x16.265")
        let units = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
        func stream(_ units: [[UInt8]]) -> [UInt8] { units.flatMap { [0, 0, 0, 1] + $0 } }
        #expect(AnnexB.carriesHEVC(stream(units)))
        #expect(!AnnexB.carriesHEVC(stream(units.filter { HEVCNALUnitHeader($0[0], $0[1]).nalUnitType != .pictureParameterSet })))
        var layered = units
        layered[4][1] |= 0x08 // nuh_layer_id 1
        #expect(!AnnexB.carriesHEVC(stream(layered)))
        var tidZero = units
        tidZero[4][1] &= 0xF8 // nuh_temporal_id_plus1 0
        #expect(!AnnexB.carriesHEVC(stream(tidZero)))
        #expect(!AnnexB.carriesHEVC([]) && !AnnexB.carriesHEVC([0x12, 0x34, 0x56]))
    }
}
