import Testing
@testable import H264
import H264TestSupport
import MediaCore

@Suite(.ownThread) struct FramingAVCCTests {
    @Test func splitsFourByteLengths() throws {
        // 00000002 | 09 F0 (AUD) | 00000003 | 67 42 00 (start of an SPS)
        let bytes: [UInt8] = [0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0, 3, 0x67, 0x42, 0x00]
        #expect(try AVCC.nalUnits(in: bytes, lengthSize: 4) == [4..<6, 10..<13])
    }

    @Test func splitsTwoAndOneByteLengths() throws {
        let two: [UInt8] = [0, 2, 0x09, 0xF0, 0, 1, 0x0B]
        #expect(try AVCC.nalUnits(in: two, lengthSize: 2) == [2..<4, 6..<7])
        let one: [UInt8] = [2, 0x09, 0xF0, 1, 0x0B]
        #expect(try AVCC.nalUnits(in: one, lengthSize: 1) == [1..<3, 4..<5])
        #expect(try AVCC.nalUnits(in: [], lengthSize: 4).isEmpty)
    }

    /// A catalogue of malformed AVCC data, each with the error code and offset it must give.
    struct Malformed: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var lengthSize: Int
        var code: MediaError.Code
        var byteOffset: Int?
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = [
        Malformed(name: "length size 3", bytes: [0, 0, 1, 0x09], lengthSize: 3, code: .invalidLengthSize, byteOffset: nil),
        Malformed(name: "length size 0", bytes: [0x09], lengthSize: 0, code: .invalidLengthSize, byteOffset: nil),
        Malformed(name: "length size 8", bytes: [0x09], lengthSize: 8, code: .invalidLengthSize, byteOffset: nil),
        Malformed(name: "length past end", bytes: [0, 0, 0, 5, 0x09, 0xF0], lengthSize: 4, code: .lengthPastEnd, byteOffset: 0),
        Malformed(name: "second length past end", bytes: [0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0, 9, 0x41],
                  lengthSize: 4, code: .lengthPastEnd, byteOffset: 6),
        Malformed(name: "huge length", bytes: [0xFF, 0xFF, 0xFF, 0xFF, 0x41], lengthSize: 4, code: .lengthPastEnd, byteOffset: 0),
        Malformed(name: "truncated length field", bytes: [0, 0, 0, 2, 0x09, 0xF0, 0, 0], lengthSize: 4, code: .truncated, byteOffset: 6),
        Malformed(name: "truncated 2-byte length", bytes: [0, 1, 0x0B, 0], lengthSize: 2, code: .truncated, byteOffset: 3),
        Malformed(name: "zero length", bytes: [0, 0, 0, 0, 0, 0, 0, 1, 0x09], lengthSize: 4, code: .emptyNALUnit, byteOffset: 0),
        Malformed(name: "zero 1-byte length", bytes: [1, 0x0B, 0], lengthSize: 1, code: .emptyNALUnit, byteOffset: 2),
    ]

    @Test(arguments: malformed)
    func rejectsMalformedData(_ testCase: Malformed) {
        do {
            let units = try AVCC.nalUnits(in: testCase.bytes, lengthSize: testCase.lengthSize)
            Issue.record("no error, got \(units)")
        } catch {
            #expect(error.code == testCase.code)
            #expect(error.byteOffset == testCase.byteOffset)
        }
    }

    @Test func skipsEmptyNALUnitsWhenAllowed() throws {
        let bytes: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1, 0x09]
        #expect(try AVCC.nalUnits(in: bytes, lengthSize: 4, allowingEmptyNALUnits: true) == [8..<9])
    }

    @Test(arguments: [1, 2, 4])
    func appendWritesBigEndianLengths(lengthSize: Int) throws {
        var out: [UInt8] = []
        let unit = [UInt8](repeating: 0x41, count: 255)
        try AVCC.append(nalUnit: unit, lengthSize: lengthSize, to: &out)
        // 255 = 0xFF, big-endian in lengthSize bytes.
        #expect(Array(out.prefix(lengthSize)) == [UInt8](repeating: 0, count: lengthSize - 1) + [0xFF])
        #expect(try AVCC.nalUnits(in: out, lengthSize: lengthSize) == [lengthSize..<lengthSize + 255])
    }

    @Test func appendRejectsWhatCannotBeWritten() {
        var out: [UInt8] = []
        do { try AVCC.append(nalUnit: [UInt8](repeating: 0x41, count: 256), lengthSize: 1, to: &out); Issue.record("no error") } catch {
            #expect(error.code == .valueOutOfRange)
        }
        do { try AVCC.append(nalUnit: [UInt8](repeating: 1, count: 65536), lengthSize: 2, to: &out); Issue.record("no error") } catch {
            #expect(error.code == .valueOutOfRange)
        }
        do { try AVCC.append(nalUnit: [], lengthSize: 4, to: &out); Issue.record("no error") } catch {
            #expect(error.code == .emptyNALUnit)
        }
        do { try AVCC.append(nalUnit: [0x09], lengthSize: 3, to: &out); Issue.record("no error") } catch {
            #expect(error.code == .invalidLengthSize)
        }
        #expect(out.isEmpty)
    }

    /// Eyevinn/mp4ff avc/testdata/two-frames.264: 4-byte lengths. Its NAL units, read with a
    /// throw-away Python loop over the length fields: AUD, SPS (27 bytes), PPS (4), IDR
    /// (16,219), AUD, non-IDR slice (170).
    @Test
    func parsesTheAVCCFixture() throws {
        let bytes = try TestFixtures.data("avcc/mp4ff_two_frames_avcc_len4.264")
        let ranges = try AVCC.nalUnits(in: bytes, lengthSize: 4)
        #expect(ranges.map { bytes[$0.lowerBound] & 0x1F } == [9, 7, 8, 5, 9, 1])
        #expect(ranges.map(\.count) == [2, 27, 4, 16219, 2, 170])
        #expect(ranges.last?.upperBound == bytes.count)
        // With the wrong length size the same bytes are an error, not a crash.
        #expect(throws: MediaError.self) { try AVCC.nalUnits(in: bytes, lengthSize: 2) }
    }
}
