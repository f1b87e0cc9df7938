import H264TestSupport
import Testing
import H264
import HEVC

/// The two-byte NAL unit header and the 64 types of H.265 Table 7-1.
@Suite(.ownThread) struct HEVCNALUnitTests {
    /// Every type, layer and temporal id survives encoding and decoding the two header bytes.
    @Test func headerRoundTripsForAll64Types() throws {
        for type in 0..<64 {
            for (layer, tid) in [(0, 1), (1, 7), (63, 3)] {
                let header = HEVCNALUnitHeader(nalUnitType: HEVCNALUnitType(rawValue: UInt8(type)),
                                               nuhLayerId: UInt8(layer), nuhTemporalIdPlus1: UInt8(tid))
                let bytes = header.bytes
                #expect(HEVCNALUnitHeader(bytes[0], bytes[1]) == header)
                #expect(try HEVCNALUnitHeader(validating: bytes) == header)
            }
        }
        // An IDR_W_RADL header as x265 writes it: 0x26 0x01.
        let idr = HEVCNALUnitHeader(0x26, 0x01)
        #expect(idr.nalUnitType == .idrWRADL && idr.nuhLayerId == 0 && idr.temporalId == 0)
        #expect(idr.description == "IDR_W_RADL layer=0 tid=0")
    }

    @Test func namesFollowTable7_1() {
        let names = (0..<64).map { HEVCNALUnitType(rawValue: UInt8($0)).name }
        #expect(names[0...9] == ["TRAIL_N", "TRAIL_R", "TSA_N", "TSA_R", "STSA_N", "STSA_R", "RADL_N", "RADL_R", "RASL_N", "RASL_R"])
        #expect(names[10...15] == ["RSV_VCL_N10", "RSV_VCL_R11", "RSV_VCL_N12", "RSV_VCL_R13", "RSV_VCL_N14", "RSV_VCL_R15"])
        #expect(names[16...23] == ["BLA_W_LP", "BLA_W_RADL", "BLA_N_LP", "IDR_W_RADL", "IDR_N_LP", "CRA_NUT", "RSV_IRAP_VCL22", "RSV_IRAP_VCL23"])
        #expect(names[24] == "RSV_VCL24" && names[31] == "RSV_VCL31")
        #expect(names[32...40] == ["VPS_NUT", "SPS_NUT", "PPS_NUT", "AUD_NUT", "EOS_NUT", "EOB_NUT", "FD_NUT", "PREFIX_SEI_NUT", "SUFFIX_SEI_NUT"])
        #expect(names[41] == "RSV_NVCL41" && names[47] == "RSV_NVCL47")
        #expect(names[48] == "UNSPEC48" && names[63] == "UNSPEC63")
        #expect(Set(names).count == 64)
    }

    @Test func predicates() {
        let types = (0..<64).map { HEVCNALUnitType(rawValue: UInt8($0)) }
        #expect(types.filter(\.isVCL).map(\.rawValue) == Array(0...31))
        #expect(types.filter(\.isIRAP).map(\.rawValue) == Array(16...23))
        #expect(types.filter(\.isIDR) == [.idrWRADL, .idrNLP])
        #expect(types.filter(\.isBLA) == [.blaWLP, .blaWRADL, .blaNLP])
        #expect(types.filter(\.isParameterSet) == [.videoParameterSet, .sequenceParameterSet, .pictureParameterSet])
        #expect(types.filter(\.isUnspecified).map(\.rawValue) == Array(48...63))
        #expect(types.filter(\.isLeadingPicture) == [.radlN, .radlR, .raslN, .raslR])
        #expect(HEVCNALUnitType.cra.isIRAP && !HEVCNALUnitType.cra.isIDR)
    }

    @Test func invalidHeadersThrowTheirCode() {
        #expect(throws: MediaError.self) { try HEVCNALUnitHeader(validating: [0x40]) }
        #expect(HEVCNALUnitHeader(0x40, 0x01).nalUnitType == .videoParameterSet)
        for (bytes, code) in [([UInt8]([0x40]), MediaError.Code.emptyNALUnit), ([0xC0, 0x01], .forbiddenZeroBit), ([0x40, 0x00], .valueOutOfRange)] {
            do {
                _ = try HEVCNALUnitHeader(validating: bytes)
                Issue.record("\(bytes) accepted")
            } catch {
                #expect(error.code == code)
            }
        }
    }
}
