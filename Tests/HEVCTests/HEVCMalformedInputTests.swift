import Testing
import H264
import HEVC
import H264TestSupport

/// Inputs the fuzz targets found, and other malformed parameter sets: each throws its code (or
/// parses), never traps.
@Suite struct HEVCMalformedInputTests {
    /// Found by the `hevc-ps` fuzz target: a VPS with `vps_base_layer_internal_flag` 0,
    /// `vps_num_layer_sets_minus1` 0 and HRD parameters, whose `hrd_layer_set_idx` range was
    /// empty (1...0) and trapped.
    static let emptyHRDLayerSetRange: [UInt8] = [
        0x00, 0x00, 0x00, 0x01, 0x40, 0x2B, 0x01, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6,
        0xA6, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC2, 0xC2, 0xC2, 0xC2,
        0xC2, 0xC2, 0xC2, 0xC2, 0xC2, 0xC2, 0xC2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0x0C, 0x01, 0xFF, 0xFF, 0x04, 0x08,
        0x00, 0x03, 0x00, 0x99, 0xA8, 0x00, 0x00, 0x03, 0x00, 0x00, 0x3C, 0xBA, 0x02, 0x40,
    ]

    @Test func vpsWithAnEmptyHRDLayerSetRangeDoesNotTrap() {
        let units = AnnexB.nalUnits(in: Self.emptyHRDLayerSetRange).map { Array(Self.emptyHRDLayerSetRange[$0.range]) }
        #expect(!units.isEmpty)
        for unit in units {
            _ = try? HEVCVideoParameterSet(nalUnit: unit)
            _ = try? HEVCVideoParameterSet.syntaxElements(nalUnit: unit)
        }
        _ = HEVCAccessUnitAssembler.accessUnits(inAnnexB: Self.emptyHRDLayerSetRange)
    }

    /// Each parameter set refuses the wrong NAL unit type, a header alone, and a cut, with its code.
    @Test func wrongTypeTruncationAndShortHeaderThrowTheirCodes() throws {
        let bytes = try TestFixtures.data("hevc/tiny_16x16.265")
        let units = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
        let (vps, sps, pps) = (units[0], units[1], units[2])
        func code(_ body: () throws(H264Error) -> Void) -> H264Error.Code? {
            do { try body(); return nil } catch { return error.code }
        }
        #expect(code { () throws(H264Error) in _ = try HEVCVideoParameterSet(nalUnit: sps) } == .unexpectedNALUnitType)
        #expect(code { () throws(H264Error) in _ = try HEVCSequenceParameterSet(nalUnit: pps) } == .unexpectedNALUnitType)
        #expect(code { () throws(H264Error) in _ = try HEVCPictureParameterSet(nalUnit: vps) } == .unexpectedNALUnitType)
        #expect(code { () throws(H264Error) in _ = try HEVCSequenceParameterSet(nalUnit: [0x42]) } == .emptyNALUnit)
        #expect(code { () throws(H264Error) in _ = try HEVCSequenceParameterSet(nalUnit: sps.prefix(20)) } == .truncated)
        #expect(code { () throws(H264Error) in _ = try HEVCPictureParameterSet(nalUnit: pps.prefix(3)) } == .truncated)
        var forbidden = sps
        forbidden[0] |= 0x80
        #expect(code { () throws(H264Error) in _ = try HEVCSequenceParameterSet(nalUnit: forbidden) } == .forbiddenZeroBit)
        var layer1 = sps
        layer1[1] |= 0x08 // nuh_layer_id 1
        #expect(code { () throws(H264Error) in _ = try HEVCSequenceParameterSet(nalUnit: layer1) } == .unsupported)
    }
}
