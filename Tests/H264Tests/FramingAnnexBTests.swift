import Testing
@testable import H264
import H264TestSupport
import MediaCore

@Suite(.ownThread) struct FramingAnnexBTests {
    /// Hand-made byte vectors and the locations Annex B gives them (worked out by hand).
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var expected: [NALUnitLocation]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "empty input", bytes: [], expected: []),
        Case(name: "lone start code", bytes: [0, 0, 1], expected: []),
        // 3-byte start codes: AUD (09 F0) then SPS bytes.
        Case(name: "3-byte start codes", bytes: [0, 0, 1, 0x09, 0xF0, 0, 0, 1, 0x67, 0x42],
             expected: [.init(startCodeOffset: 0, range: 3..<5), .init(startCodeOffset: 5, range: 8..<10)]),
        // zero_byte + start_code_prefix_one_3bytes: the 4-byte form of B.1.1.
        Case(name: "4-byte start codes", bytes: [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 1, 0x67],
             expected: [.init(startCodeOffset: 0, range: 4..<6), .init(startCodeOffset: 6, range: 10..<11)]),
        // trailing_zero_8bits after the first unit: 5 zeros, the last two of which with the 01
        // form the next start code's zero_byte + prefix (offset 7 = the zero_byte).
        Case(name: "trailing zero bytes", bytes: [0, 0, 1, 0x65, 0xAA, 0, 0, 0, 0, 0, 1, 0x41, 0xBB],
             expected: [.init(startCodeOffset: 0, range: 3..<5), .init(startCodeOffset: 7, range: 11..<13)]),
        Case(name: "trailing zeros at end of data", bytes: [0, 0, 0, 1, 0x65, 0xAA, 0, 0, 0],
             expected: [.init(startCodeOffset: 0, range: 4..<6)]),
        // leading_zero_8bits (B.2): zeros before the first 4-byte start code.
        Case(name: "leading zero bytes", bytes: [0, 0, 0, 0, 0, 1, 0x09, 0x10],
             expected: [.init(startCodeOffset: 2, range: 6..<8)]),
        Case(name: "garbage before first start code", bytes: [0xFF, 0x12, 0, 0, 1, 0x09, 0x10],
             expected: [.init(startCodeOffset: 2, range: 5..<7)]),
        Case(name: "start code at the very end", bytes: [0, 0, 1, 0x09, 0x10, 0, 0, 1],
             expected: [.init(startCodeOffset: 0, range: 3..<5)]),
        Case(name: "4-byte start code at the very end", bytes: [0, 0, 1, 0x09, 0x10, 0, 0, 0, 1],
             expected: [.init(startCodeOffset: 0, range: 3..<5)]),
        Case(name: "empty NAL unit skipped (3-byte)", bytes: [0, 0, 1, 0, 0, 1, 0x09, 0x10],
             expected: [.init(startCodeOffset: 3, range: 6..<8)]),
        Case(name: "empty NAL unit skipped (4-byte)", bytes: [0, 0, 1, 0, 0, 0, 1, 0x09],
             expected: [.init(startCodeOffset: 3, range: 7..<8)]),
        // Emulation prevention (7.4.1): 00 00 03 01 inside a NAL unit is not a start code.
        Case(name: "emulation prevention is not a start code", bytes: [0, 0, 1, 0x65, 0, 0, 3, 1, 0xFF],
             expected: [.init(startCodeOffset: 0, range: 3..<9)]),
        Case(name: "no start code", bytes: [1, 2, 3, 0, 0, 2], expected: []),
        Case(name: "00 00 02 is not a start code", bytes: [0, 0, 1, 0x41, 0, 0, 2, 0x10],
             expected: [.init(startCodeOffset: 0, range: 3..<8)]),
    ]

    @Test(arguments: cases)
    func splitsHandMadeVectors(_ testCase: Case) {
        #expect(AnnexB.nalUnits(in: testCase.bytes) == testCase.expected)
        #expect(ReferenceAnnexB.nalUnits(testCase.bytes) == testCase.expected)
    }

    /// The same vectors placed at every alignment inside a long run of non-zero bytes, so start
    /// codes straddle the scanner's 8- and 16-byte blocks.
    @Test(arguments: cases)
    func findsStartCodesAtEveryAlignment(_ testCase: Case) {
        for shift in 0..<33 {
            let bytes = [UInt8](repeating: 0x01, count: shift) + testCase.bytes + [UInt8](repeating: 0xAB, count: 40)
            #expect(AnnexB.nalUnits(in: bytes) == ReferenceAnnexB.nalUnits(bytes), "shift \(shift)")
        }
    }

    @Test func startCodeLengths() {
        let bytes: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0, 0, 1, 0x68, 0xCE]
        #expect(AnnexB.nalUnits(in: bytes).map(\.startCodeLength) == [4, 3])
    }

    @Test func validatingRejectsGarbage() {
        do {
            _ = try AnnexB.nalUnits(validating: [0x00, 0xFF, 0x12, 0, 0, 1, 0x09, 0x10])
            Issue.record("no error")
        } catch {
            #expect(error.code == .missingStartCode)
            #expect(error.byteOffset == 1)
        }
        #expect(throws: MediaError.self) { try AnnexB.nalUnits(validating: [0x09, 0x10]) }
    }

    @Test func validatingAcceptsLeadingZerosAndEmptyInput() throws {
        #expect(try AnnexB.nalUnits(validating: [0, 0, 0, 0, 0, 1, 0x09, 0x10]).count == 1)
        #expect(try AnnexB.nalUnits(validating: []).isEmpty)
        #expect(try AnnexB.nalUnits(validating: [0, 0]).isEmpty)
    }

    @Test func firstStartCode() {
        let bytes: [UInt8] = [0xAA, 0, 0, 0, 1, 0x09, 0x10, 0, 0, 1, 0x41]
        #expect(AnnexB.firstStartCode(in: bytes) == 1)
        #expect(AnnexB.firstStartCode(in: bytes, from: 2) == 2) // zero_byte at 1 is before `from`
        #expect(AnnexB.firstStartCode(in: bytes, from: 5) == 7)
        #expect(AnnexB.firstStartCode(in: bytes, from: 8) == nil)
        #expect(AnnexB.firstStartCode(in: [], from: 0) == nil)
        #expect(AnnexB.firstStartCode(in: bytes, from: 100) == nil)
    }

    /// Random buffers rich in 00 and 01 bytes: the word-at-a-time scanner agrees with the naive one.
    @Test(arguments: 0..<20)
    func agreesWithReferenceOnRandomBuffers(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed))
        for _ in 0..<200 {
            let count = Int.random(in: 0...300, using: &rng)
            let bytes = (0..<count).map { _ -> UInt8 in
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<5: 0
                case 5..<7: 1
                case 7: 3
                default: UInt8.random(in: 0...255, using: &rng)
                }
            }
            #expect(AnnexB.nalUnits(in: bytes) == ReferenceAnnexB.nalUnits(bytes))
        }
    }

    /// Every conformance stream: the NAL unit types in order are exactly those FFmpeg found
    /// (`expected/NAME.json`, concatenated `nal_types` of all access units).
    @Test(arguments: TestFixtures.conformanceStreams)
    func conformanceStreamNALUnitTypes(_ name: String) throws {
        let bytes = try TestFixtures.data("conformance/\(name)")
        let expected = try ExpectedStream.load(name)
        let units = AnnexB.nalUnits(in: bytes)
        #expect(units.count == expected.accessUnits.reduce(0) { $0 + $1.nalTypes.count })
        #expect(units.map { Int(bytes[$0.range.lowerBound] & 0x1F) } == expected.nalTypes)
        #expect(units == ReferenceAnnexB.nalUnits(bytes))
        #expect(try AnnexB.nalUnits(validating: bytes) == units)
        // FFmpeg's access units partition the file, each starting at its first start code.
        var auStarts: [Int] = []
        var offset = 0
        for au in expected.accessUnits {
            auStarts.append(offset)
            offset += au.bytes
        }
        #expect(offset == bytes.count)
        var unitIndex = 0
        for (au, start) in zip(expected.accessUnits, auStarts) {
            guard unitIndex < units.count else { break }
            #expect(units[unitIndex].startCodeOffset == start, "access unit at \(start)")
            unitIndex += au.nalTypes.count
        }
    }
}
