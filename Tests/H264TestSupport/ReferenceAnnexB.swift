public import H264

/// A deliberately naive Annex-B splitter — byte by byte, straight from the rules in Annex B —
/// to check the word-at-a-time scanner against.
public enum ReferenceAnnexB {
    public static func nalUnits(_ bytes: [UInt8]) -> [NALUnitLocation] {
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

    /// The NAL units' bytes (header byte first), as ``nalUnits(_:)`` finds them.
    public static func split(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        nalUnits(bytes).map { bytes[$0.range] }
    }
}

