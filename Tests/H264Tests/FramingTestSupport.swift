import Foundation
@testable import H264
import H264TestSupport

/// SplitMix64 (Steele, Lea & Flood 2014): a small seeded generator, so failures reproduce.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A deliberately naive Annex-B splitter — byte by byte, straight from the rules in Annex B —
/// to check the word-at-a-time scanner against.
enum ReferenceAnnexB {
    static func nalUnits(_ bytes: [UInt8]) -> [NALUnitLocation] {
        var prefixes: [Int] = []
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0 && bytes[i + 1] == 0 && bytes[i + 2] == 1 {
                prefixes.append(i)
                i += 3
            } else {
                i += 1
            }
        }
        var result: [NALUnitLocation] = []
        for (n, prefix) in prefixes.enumerated() {
            let lowerBound = n == 0 ? 0 : prefixes[n - 1] + 3
            let startCode = prefix > lowerBound && bytes[prefix - 1] == 0 ? prefix - 1 : prefix
            let start = prefix + 3
            var end = n + 1 < prefixes.count ? prefixes[n + 1] : bytes.count
            while end > start && bytes[end - 1] == 0 { end -= 1 }
            if end > start { result.append(NALUnitLocation(startCodeOffset: startCode, range: start..<end)) }
        }
        return result
    }
}

/// `expected/NAME.json`, the parts these tests use (read off FFmpeg 5.1).
struct ExpectedStream: Decodable {
    struct AccessUnit: Decodable {
        var bytes: Int
        var nal_types: [Int]
    }
    var access_units: [AccessUnit]
    var sps: [[[JSONScalar]]]
    var pps: [[[JSONScalar]]]

    /// A name or a number in the `[name, value]` pairs.
    enum JSONScalar: Decodable {
        case string(String), number(Double)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .string(text) } else { self = .number(try container.decode(Double.self)) }
        }
    }

    static func load(_ name: String) throws -> ExpectedStream {
        let url = TestFixtures.shared.appendingPathComponent("expected/\(name).json")
        return try JSONDecoder().decode(ExpectedStream.self, from: Data(contentsOf: url))
    }

    var nalTypes: [Int] { access_units.flatMap(\.nal_types) }
}

/// The NAL units of whole-buffer parsing, as bytes.
func nalUnitBytes(_ bytes: [UInt8]) -> [[UInt8]] {
    AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
}

let sharedStreams: [String] = TestFixtures.runSharedTests ? TestFixtures.conformanceStreams : []
