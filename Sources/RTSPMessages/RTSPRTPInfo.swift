public import MediaCore
/// The `RTP-Info` header of a PLAY answer (RFC 2326 clause 12.33): for each stream, its URL,
/// the sequence number of its first packet and the RTP timestamp that matches the start of the
/// `Range`.
///
/// ```swift
/// let info = RTSPRTPInfo(parsing: "url=rtsp://cam/live/track1;seq=45102;rtptime=2890844526")
/// var warnings = info.warnings
/// let track = info.stream(for: "rtsp://cam/live/track1", warnings: &warnings)   // seq 45102
/// ```
///
/// Reading never fails: cameras send values the RFC does not allow, and FFmpeg (`rtsp.c`) and
/// retina play them. An `rtptime` or `seq` that is not a number in range (a negative `rtptime`:
/// scottlamb/moonfire-nvr#224, OMNY M5S2A) is left out with a warning; an empty parameter (a
/// trailing `;`: scottlamb/retina#117, Laureii) is skipped; a parameter without `=` or a stream
/// without `url` is warned about. Each warning is `MediaError.Code.invalidRTSPHeader` with the
/// parameter as its field and its byte offset in the header's value.
public struct RTSPRTPInfo: Hashable, Sendable {
    /// One stream's entry.
    public struct Stream: Hashable, Sendable {
        /// `url`: the stream's control URL (absolute, or relative to the base); nil when absent.
        public var url: String?
        /// `seq`: the sequence number of the first packet sent after PLAY; nil when absent or unreadable.
        public var sequenceNumber: UInt16?
        /// `rtptime`: the RTP timestamp of the `Range` start; nil when absent or unreadable.
        public var rtpTime: UInt32?

        /// Creates an entry.
        public init(url: String? = nil, sequenceNumber: UInt16? = nil, rtpTime: UInt32? = nil) {
            self.url = url
            self.sequenceNumber = sequenceNumber
            self.rtpTime = rtpTime
        }
    }

    /// The entries, in the header's order.
    public var streams: [Stream]
    /// What was tolerated (see the type's discussion).
    public var warnings: [MediaError]

    /// Reads the value of an `RTP-Info` header.
    public init(parsing value: String) {
        var streams: [Stream] = []
        var warnings: [MediaError] = []
        func warn(_ field: String, _ part: Substring, _ message: String) {
            warnings.append(MediaError(.invalidRTSPHeader, field: "RTP-Info \(field)",
                                      byteOffset: value.utf8.distance(from: value.startIndex, to: part.startIndex), message))
        }
        for entry in value.split(separator: ",") where entry.contains(where: { $0 != ";" && $0 != " " && $0 != "\t" }) {
            var stream = Stream()
            for parameter in entry.split(separator: ";") {
                let text = parameter.trimmingASCIIWhitespace()
                if text.isEmpty { continue } // retina#117: a trailing semicolon
                let pair = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2 else {
                    warn("parameter", parameter, "\"\(text.prefix(32))\" has no value: ignored")
                    continue
                }
                let name = pair[0].trimmingASCIIWhitespace().lowercased(), number = pair[1].trimmingASCIIWhitespace()
                switch name {
                case "url":
                    stream.url = number
                case "seq":
                    stream.sequenceNumber = UInt16(number)
                    if stream.sequenceNumber == nil { warn("seq", parameter, "\"\(number.prefix(32))\" is not a sequence number: ignored") }
                case "rtptime":
                    stream.rtpTime = UInt32(number)
                    if stream.rtpTime == nil { warn("rtptime", parameter, "\"\(number.prefix(32))\" is not an RTP timestamp: ignored") }
                default:
                    break // ssrc and extensions
                }
            }
            if stream.url == nil { warn("url", entry, "an entry without url") }
            streams.append(stream)
        }
        self.streams = streams
        self.warnings = warnings
    }

    /// The entry of the stream whose control URL is `url`: the one whose `url` is `url` (a
    /// trailing `/` aside) or, relative, ends it. A presentation of one stream (`streamCount`
    /// 1) with one entry that names another URL gets that entry, with a warning (retina's
    /// reading, for the GW Security GW4089IP: RFC 2326 clause 14.3 asks for such forgiveness);
    /// otherwise nil, with a warning when there were entries.
    public func stream(for url: String, streamCount: Int = 1, warnings: inout [MediaError]) -> Stream? {
        func trimmed(_ text: String) -> Substring { text.hasSuffix("/") ? text.dropLast() : Substring(text) }
        let wanted = trimmed(url)
        if let match = streams.first(where: { entry in
            guard let named = entry.url.map(trimmed), !named.isEmpty else { return false }
            return named == wanted || (!named.contains("://") && wanted.hasSuffix("/" + named))
        }) {
            return match
        }
        guard !streams.isEmpty else { return nil }
        let named = streams.map { $0.url ?? "(none)" }.joined(separator: ", ")
        if streams.count == 1, streamCount == 1 {
            warnings.append(MediaError(.invalidRTSPHeader, field: "RTP-Info url", "url \(named) is not \(url): taken as its entry (one stream)"))
            return streams[0]
        }
        warnings.append(MediaError(.invalidRTSPHeader, field: "RTP-Info url", "no entry for \(url) (urls: \(named)): ignored"))
        return nil
    }
}
