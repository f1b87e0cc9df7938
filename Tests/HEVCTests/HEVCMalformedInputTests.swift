import Testing
import H264
import HEVC
import H264TestSupport
import RTP

/// Inputs the fuzz targets found, and other malformed parameter sets: each throws its code (or
/// parses), never traps.
@Suite(.ownThread) struct HEVCMalformedInputTests {
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

    /// The tiny stream's VPS, SPS and PPS.
    static let parameterSets: (vps: [UInt8], sps: [UInt8], pps: [UInt8]) = {
        let bytes = (try? TestFixtures.data("hevc/tiny_16x16.265")) ?? []
        let units = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
        return units.count >= 3 ? (units[0], units[1], units[2]) : ([], [], [])
    }()

    /// The malformed-input catalogue's H.265 rows: each parameter set refuses the wrong NAL unit
    /// type, a header alone, a cut, `forbidden_zero_bit` and a layer above 0 with its code and field.
    static let cases: [MalformedCase] = {
        let (vps, sps, pps) = parameterSets
        let forbidden = sps.isEmpty ? [] : [sps[0] | 0x80] + sps.dropFirst()
        let layer1 = sps.count < 2 ? [] : [sps[0], sps[1] | 0x08] + sps.dropFirst(2) // nuh_layer_id 1
        return [
            MalformedCase("VPS parser given an SPS", .unexpectedNALUnitType, field: "nal_unit_type") { _ = try HEVCVideoParameterSet(nalUnit: sps) },
            MalformedCase("SPS parser given a PPS", .unexpectedNALUnitType, field: "nal_unit_type") { _ = try HEVCSequenceParameterSet(nalUnit: pps) },
            MalformedCase("PPS parser given a VPS", .unexpectedNALUnitType, field: "nal_unit_type") { _ = try HEVCPictureParameterSet(nalUnit: vps) },
            MalformedCase("SPS of one byte", .emptyNALUnit, field: "nal_unit_header") { _ = try HEVCSequenceParameterSet(nalUnit: [0x42]) },
            MalformedCase("SPS cut in the profile", .truncated, field: "general_reserved_zero_7bits") { _ = try HEVCSequenceParameterSet(nalUnit: sps.prefix(10)) },
            MalformedCase("PPS cut after its header", .truncated, field: "pps_pic_parameter_set_id") { _ = try HEVCPictureParameterSet(nalUnit: pps.prefix(2)) },
            MalformedCase("SPS with forbidden_zero_bit", .forbiddenZeroBit, field: "forbidden_zero_bit") { _ = try HEVCSequenceParameterSet(nalUnit: forbidden) },
            MalformedCase("SPS of layer 1", .unsupported, field: "nuh_layer_id") { _ = try HEVCSequenceParameterSet(nalUnit: layer1) },
            MalformedCase("hvcC of version 2", .invalidConfigurationRecord, field: "configurationVersion") {
                _ = try HEVCDecoderConfigurationRecord(parsing: [2] + [UInt8](repeating: 0, count: 22))
            },
            MalformedCase("hvcC cut in its arrays", .truncated, field: "numNalus") {
                _ = try HEVCDecoderConfigurationRecord(parsing: [UInt8](repeating: 0, count: 22) + [1, 0x20])
            },
            // RTP (RFC 7798): what the packetizer and the SDP reader refuse.
            MalformedCase("RTP: a NAL unit of type 48 (an AP's)", .unsupported, field: "nal_unit_type") {
                var packetizer = HEVCRTPPacketizer()
                _ = try packetizer.packets(hvcc: [0, 0, 0, 3, 0x60, 0x01, 0x00], presentationTime: .zero)
            },
            MalformedCase("RTP: a NAL unit of one byte", .truncated, field: "nal_unit_header") {
                var packetizer = HEVCRTPPacketizer()
                _ = try packetizer.packets(hvcc: [0, 0, 0, 1, 0x02], presentationTime: .zero)
            },
            MalformedCase("RTP: an MTU leaving 3 payload bytes", .valueOutOfRange, field: "maximumTransmissionUnit") {
                var packetizer = HEVCRTPPacketizer(configuration: .init(maximumTransmissionUnit: 43))
                _ = try packetizer.packets(hvcc: [0, 0, 0, 3, 0x02, 0x01, 0x00], presentationTime: .zero)
            },
            MalformedCase("SDP: sprop-max-don-diff out of range", .invalidSessionDescription, field: "sprop-max-don-diff") {
                _ = try SessionDescription(parsingHEVC: "v=0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 H265/90000\r\na=fmtp:96 sprop-max-don-diff=40000\r\n")
            },
            MalformedCase("SDP: no H265 rtpmap", .invalidSessionDescription, field: "m=video") {
                _ = try SessionDescription(parsingHEVC: "v=0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n")
            },
        ]
    }()

    @Test(arguments: cases)
    func rejected(_ malformed: MalformedCase) {
        malformed.expectRejected()
    }
}

/// Tolerable values: kept, and reported once with code, field and offset.
@Suite(.ownThread) struct HEVCTolerableValueTests {
    /// The tiny stream with its SPS's `general_profile_space` set to 1 (a value H.265 reserves,
    /// which does not change how the rest is read).
    static func streamWithProfileSpace1() throws -> (bytes: [UInt8], spsOffset: Int) {
        var bytes = try TestFixtures.data("hevc/tiny_16x16.265")
        let sps = try #require(AnnexB.nalUnits(in: bytes).first { HEVCNALUnitHeader(bytes[$0.range.lowerBound], 0).nalUnitType == .sequenceParameterSet })
        bytes[sps.range.lowerBound + 3] |= 0x40 // the byte after the header and the ids: profile_space, tier, profile_idc
        return (bytes, sps.startCodeOffset)
    }

    @Test func aReservedProfileSpaceIsKeptWithAWarning() throws {
        let (bytes, spsOffset) = try Self.streamWithProfileSpace1()
        let sps = try #require(AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }.compactMap { try? HEVCSequenceParameterSet(nalUnit: $0) }.first)
        #expect(sps.profileTierLevel.general?.profileSpace == 1)
        #expect(sps.diagnostics == [MediaError(.valueOutOfRange, field: "general_profile_space", bitOffset: 24,
                                              "1 is reserved or not allowed, expected 0 (kept)")])
        var assembler = HEVCAccessUnitAssembler()
        var units = AnnexB.nalUnits(in: bytes).compactMap { assembler.append(nalUnit: bytes[$0.range], streamOffset: $0.startCodeOffset) }
        if let last = assembler.finish(streamLength: bytes.count) { units.append(last) }
        #expect(units.count == 6 && assembler.errorCount == 0)
        #expect(assembler.warningCount == 1)
        #expect(assembler.recentWarnings.first?.byteOffset == spsOffset && assembler.recentWarnings.first?.field == "general_profile_space")
    }
}
