public import MediaCore
// The fmtp parameters of an H.265 stream (RFC 7798 section 7.1) for SessionDescription, whose
// line handling is the one for both codecs.

extension SessionDescription {
    /// What an `fmtp` line says, for either codec.
    package struct FormatParameters {
        package var mode = 0
        package var profileLevelId: [UInt8]?
        package var parameterSets: [[UInt8]] = []
        package var maximumDONDifference = 0
    }

    /// The H.265 parameters: `sprop-vps`, `sprop-sps`, `sprop-pps` (comma-separated base64 NAL
    /// units; an entry that is not a parameter set of its kind is skipped with a warning, as for
    /// H.264) and `sprop-max-don-diff`. Others (`profile-id`, `tier-flag`, `level-id` …) are
    /// read from the parameter sets themselves, not from here.
    package static func h265FormatParameters(_ text: Substring, offset: Int?, warnings: inout [MediaError]) throws(MediaError)
        -> FormatParameters {
        var result = FormatParameters()
        var sets: [UInt8: [[UInt8]]] = [:]
        let types: [String: UInt8] = ["sprop-vps": 32, "sprop-sps": 33, "sprop-pps": 34]
        for parameter in text.split(separator: ";") {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let key = pair[0].trimmingSpaces.lowercased(), value = pair[1].trimmingSpaces
            if key == "sprop-max-don-diff" {
                guard let number = Int(value), (0...32_767).contains(number) else {
                    throw MediaError(.invalidSessionDescription, field: key, byteOffset: offset, "\"\(value)\" is not a number from 0 to 32767")
                }
                result.maximumDONDifference = number
            } else if let type = types[key] {
                for entry in value.split(separator: ",", omittingEmptySubsequences: false) {
                    let unit = try? Base64.decode(entry.trimmingSpaces)
                    guard let unit, unit.count > 2, unit[0] & 0x80 == 0, (unit[0] >> 1) & 0x3F == type else {
                        warnings.append(MediaError(.invalidSessionDescription, field: key, byteOffset: offset,
                                                  "entry \"\(entry)\" is not a parameter set of its kind: skipped (the in-band ones are used)"))
                        continue
                    }
                    sets[type, default: []].append(unit)
                }
            }
        }
        result.parameterSets = [32, 33, 34].flatMap { sets[$0] ?? [] }
        return result
    }

    /// The H.265 `fmtp` parameters of ``parameterSets`` and ``maximumDONDifference``.
    package var h265FormatParameters: String {
        var fields: [String] = []
        for (name, type) in [("sprop-vps", 32), ("sprop-sps", 33), ("sprop-pps", 34)] as [(String, UInt8)] {
            let units = parameterSets.filter { $0.count > 2 && ($0[0] >> 1) & 0x3F == type }
            if !units.isEmpty { fields.append(name + "=" + units.map { Base64.encode($0) }.joined(separator: ",")) }
        }
        if maximumDONDifference > 0 { fields.append("sprop-max-don-diff=\(maximumDONDifference)") }
        return fields.joined(separator: ";")
    }
}
