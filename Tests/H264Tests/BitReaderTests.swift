import H264TestSupport
import Testing
import MediaCore
@testable import H264

@Suite(.ownThread) struct BitReaderTests {
    // ue(v) codewords from Table 9-2: 1 → 0, 010 → 1, 011 → 2, 00100 → 3, 00111 → 6.
    @Test func readsExpGolombCodesOfTable9_2() throws {
        // bits: 1 010 011 00100 00111 + padding
        var reader = BitReader([0b1010_0110, 0b0100_0011, 0b1000_0000])
        #expect(try reader.readUE("a") == 0)
        #expect(try reader.readUE("b") == 1)
        #expect(try reader.readUE("c") == 2)
        #expect(try reader.readUE("d") == 3)
        #expect(try reader.readUE("e") == 6)
    }

    // se(v) mapping of Table 9-3: codeNum 1 → 1, 2 → -1, 3 → 2.
    @Test func readsSignedExpGolomb() throws {
        var reader = BitReader([0b0100_1100, 0b1000_0000])
        #expect(try reader.readSE("a") == 1)
        #expect(try reader.readSE("b") == -1)
        #expect(try reader.readSE("c") == 2)
    }

    @Test func rejectsThirtyTwoLeadingZeros() {
        var reader = BitReader([0, 0, 0, 0, 0x80])
        #expect(throws: MediaError.self) { try reader.readUE("x") }
        do { _ = try reader.readUE("x") } catch { #expect(error.code == .expGolombOverflow); #expect(error.field == "x") }
    }

    @Test func rangeIsChecked() {
        var reader = BitReader([0b0001_0000]) // 0001000 → 7
        do { _ = try reader.readUE("seq_parameter_set_id", max: 5); Issue.record("no error") } catch {
            #expect(error.code == .valueOutOfRange)
            #expect(error.field == "seq_parameter_set_id")
            #expect(error.bitOffset == 0)
        }
    }

    @Test func moreRBSPDataFindsStopBit() throws {
        var reader = BitReader([0b1100_0000, 0x00])
        #expect(reader.moreRBSPData())
        _ = try reader.readBits(1, "x")
        #expect(!reader.moreRBSPData())
        try reader.readTrailingBits()
    }

    @Test func rbspRoundTrip() {
        let rbsp: [UInt8] = [0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x05]
        let escaped = RBSP.encode(rbsp)
        #expect(escaped == [0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x03, 0x05])
        #expect(RBSP.decode(escaped) == rbsp)
    }
}
