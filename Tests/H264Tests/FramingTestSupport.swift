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

/// The NAL units of whole-buffer parsing, as bytes.
func nalUnitBytes(_ bytes: [UInt8]) -> [[UInt8]] {
    AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
}

let sharedStreams: [String] = TestFixtures.runSharedTests ? TestFixtures.conformanceStreams : []
