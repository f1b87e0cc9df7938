import H264
import H264TestSupport
import Testing

/// `AVCC.fromAnnexB` copies NAL units as it finds them from 1 MiB of input on, and sizes its
/// output first below that: both paths must agree, errors included. Inputs are built here:
/// hand-made NAL units (an SPS and a PPS, both id 0, and an IDR slice of made-up bytes;
/// only types and ids matter here) repeated past the threshold.
extension AllBenchmarks {
@Suite("One-pass Annex-B → AVCC")
struct OnePassConversionTests {
    /// `count` copies of: 4-byte start code, SPS, 3-byte start code, PPS, 3-byte start code,
    /// an IDR slice of `sliceBytes` bytes (no zero pairs), a trailing zero byte.
    static func stream(count: Int, sliceBytes: Int) -> [UInt8] {
        var unit: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0x00, 0x1E, 0xF4, 0, 0, 1, 0x68, 0xCE, 0x38, 0x80, 0, 0, 1, 0x65]
        unit += (0..<sliceBytes - 1).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) }
        unit.append(0)
        return Array([[UInt8]](repeating: unit, count: count).joined())
    }

    @Test(arguments: [AVCC.ParameterSetPlacement.inBand, .configuration], [1, 2, 4])
    func largeInputMatchesSmallPieces(placement: AVCC.ParameterSetPlacement, lengthSize: Int) throws {
        let sliceBytes = lengthSize == 1 ? 200 : 3000
        let piece = Self.stream(count: 1, sliceBytes: sliceBytes)
        let copies = (1 << 20) / piece.count + 2
        let large = Array([[UInt8]](repeating: piece, count: copies).joined())
        #expect(large.count >= 1 << 20)
        let whole = try AVCC.fromAnnexB(large, lengthSize: lengthSize, parameterSets: placement)
        let one = try AVCC.fromAnnexB(piece, lengthSize: lengthSize, parameterSets: placement)
        #expect(whole.data == Array([[UInt8]](repeating: one.data, count: copies).joined()))
        #expect(whole.sequenceParameterSets == [[0x67, 0x42, 0x00, 0x1E, 0xF4]])
        #expect(whole.pictureParameterSets == [[0x68, 0xCE, 0x38, 0x80]])
    }

    @Test func largeInputWithLeadingGarbageThrowsMissingStartCode() {
        var large: [UInt8] = [0, 0, 7]
        large += Self.stream(count: 400, sliceBytes: 3000)
        #expect(large.count >= 1 << 20)
        #expect { try AVCC.fromAnnexB(large) } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .missingStartCode && error.byteOffset == 2
        }
    }

    @Test func largeInputWithoutStartCodeThrowsMissingStartCode() throws {
        let large = [UInt8](repeating: 0x11, count: 1 << 20)
        #expect { try AVCC.fromAnnexB(large) } throws: { error in
            (error as? MediaError)?.code == .missingStartCode && (error as? MediaError)?.byteOffset == 0
        }
        #expect(try AVCC.fromAnnexB([UInt8](repeating: 0, count: 1 << 20)).data.isEmpty)
    }

    @Test func largeUnitTooLongForTwoByteLengthsThrows() {
        let large = Self.stream(count: 20, sliceBytes: 70_000)
        #expect(large.count >= 1 << 20)
        #expect { try AVCC.fromAnnexB(large, lengthSize: 2) } throws: { error in
            (error as? MediaError)?.code == .valueOutOfRange && (error as? MediaError)?.byteOffset == 19
        }
    }
}
}
