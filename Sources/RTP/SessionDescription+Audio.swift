public import MediaCore

extension SessionDescription {
    /// The first `m=audio` section of `text` whose codec this package reads: its first format
    /// with a known `rtpmap` (or the static payload types 0, PCMU, and 8, PCMA, without one),
    /// its `fmtp` (the section's only `fmtp` when none names that payload type, as Hikvision
    /// cameras write it: bluenviron/gortsplib#658, bluenviron/mediacommon#144) and `a=control`.
    /// Never throws: a malformed `rtpmap` is skipped, what is tolerated is in the result's
    /// ``AudioMediaDescription/warnings``. ``init(parsing:)`` sets ``audio`` with it; it reads
    /// an audio-only description too.
    ///
    /// - Parameter text: the SDP text.
    /// - Returns: the section's description; nil when no section has a known codec.
    public static func audioMedia(parsing text: String) -> AudioMediaDescription? {
        var section: AudioSection?
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let offset = text.utf8.distance(from: text.startIndex, to: line.startIndex)
            guard line.count >= 2, line.dropFirst().first == "=" else { continue }
            let value = line.dropFirst(2)
            if line.first == "m" {
                if let found = section?.description() { return found }
                section = nil
                let fields = value.split(separator: " ")
                guard fields.count >= 4, fields[0] == "audio" else { continue }
                section = AudioSection(formats: fields.dropFirst(3).compactMap { UInt8($0) }.filter { $0 < 128 })
                continue
            }
            guard line.first == "a", section != nil else { continue }
            if value.hasPrefix("rtpmap:") {
                let fields = value.dropFirst("rtpmap:".count).split(separator: " ", maxSplits: 1)
                guard fields.count == 2, let type = UInt8(fields[0].trimmingSpaces) else { continue }
                let encoding = fields[1].trimmingSpaces.split(separator: "/")
                guard encoding.count >= 2, let rate = Int(encoding[1].trimmingSpaces), (1...(1 << 31)).contains(rate) else { continue }
                var channels = 1
                if encoding.count >= 3 {
                    guard let count = Int(encoding[2].trimmingSpaces), (1...255).contains(count) else { continue }
                    channels = count
                }
                section?.rtpmaps[type] = (String(encoding[0].trimmingSpaces), rate, channels)
            } else if value.hasPrefix("fmtp:") {
                let fields = value.dropFirst("fmtp:".count).split(separator: " ", maxSplits: 1)
                if let type = UInt8(fields.first ?? ""), fields.count == 2 { section?.fmtps[type] = (fields[1], offset) }
            } else if value.hasPrefix("control:"), section?.control == nil {
                section?.control = String(value.dropFirst("control:".count).trimmingSpaces)
            }
        }
        return section?.description()
    }
}

/// One `m=audio` section while it is read.
private struct AudioSection {
    var formats: [UInt8]
    var rtpmaps: [UInt8: (name: String, rate: Int, channels: Int)] = [:]
    var fmtps: [UInt8: (parameters: Substring, offset: Int)] = [:]
    var control: String?

    /// The description of the section's first format of a known codec.
    func description() -> AudioMediaDescription? {
        for type in formats {
            // RFC 3551 Table 4: the static payload types need no rtpmap.
            let statics: [UInt8: (name: String, rate: Int, channels: Int)] = [0: ("PCMU", 8000, 1), 8: ("PCMA", 8000, 1)]
            guard let map = rtpmaps[type] ?? statics[type] else { continue }
            var warnings: [MediaError] = []
            var fmtp = fmtps[type]
            if fmtp == nil, fmtps.count == 1, let (other, only) = fmtps.first {
                warnings.append(MediaError(.invalidSessionDescription, field: "a=fmtp", byteOffset: only.offset,
                                           "the fmtp of payload type \(other) used for payload type \(type)"))
                fmtp = only
            }
            var parameters: [String: String] = [:]
            for parameter in (fmtp?.parameters ?? "").split(separator: ";") {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                // A name or value of spaces only is no parameter (it could not be written back).
                let key = pair[0].trimmingSpaces.lowercased(), value = pair[1].trimmingSpaces
                if !key.isEmpty, !value.isEmpty { parameters[key] = String(value) }
            }
            if let found = AudioMediaDescription(payloadType: type, encodingName: map.name, clockRate: map.rate,
                                                 channelCount: map.channels, formatParameters: parameters, control: control,
                                                 offset: fmtp?.offset, warnings: warnings) {
                return found
            }
        }
        return nil
    }
}
