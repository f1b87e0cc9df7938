/// What a player asks of a live media playlist in its query (RFC 8216bis §6.2.5.2 and §6.2.5.1):
/// a blocking reload (`_HLS_msn`, `_HLS_part`) and a delta update (`_HLS_skip`).
///
/// ```swift
/// let request = HLSPlaylistRequest(query: "_HLS_msn=12&_HLS_part=3&_HLS_skip=YES")
/// switch packager.playlist(for: request) { … }
/// ```
public struct HLSPlaylistRequest: Sendable, Hashable {
    /// `_HLS_msn`: hold the answer until the playlist holds this Media Sequence Number; nil: answer now.
    public var mediaSequence: Int?
    /// `_HLS_part`: with ``mediaSequence``, the Partial Segment of that segment to wait for.
    public var part: Int?
    /// `_HLS_skip=YES` (or `v2`): the player takes a delta update (`EXT-X-SKIP`).
    public var skip: Bool
    /// True when the query breaks the rules: `_HLS_part` without `_HLS_msn`, or a value that is
    /// not a non-negative decimal number. The server answers 400 Bad Request.
    public var isMalformed: Bool

    /// A request of its parts.
    ///
    /// - Parameters:
    ///   - mediaSequence: `_HLS_msn`.
    ///   - part: `_HLS_part`.
    ///   - skip: `_HLS_skip=YES`.
    public init(mediaSequence: Int? = nil, part: Int? = nil, skip: Bool = false) {
        (self.mediaSequence, self.part, self.skip) = (mediaSequence, part, skip)
        isMalformed = part != nil && mediaSequence == nil
    }

    /// The request a URL's query says (without the `?`); items other than the three are ignored.
    ///
    /// - Parameter query: `name=value` items separated by `&`.
    public init(query: String) {
        self.init()
        for item in query.split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pair[0], value = pair.count > 1 ? pair[1] : ""
            switch name {
            case "_HLS_msn":
                mediaSequence = Self.number(value)
                if mediaSequence == nil { isMalformed = true }
            case "_HLS_part":
                part = Self.number(value)
                if part == nil { isMalformed = true }
            case "_HLS_skip":
                skip = value == "YES" || value == "v2"
            default:
                continue
            }
        }
        if part != nil && mediaSequence == nil { isMalformed = true }
    }

    /// A decimal-integer of at most 9 digits (RFC 8216 §4.2 gives 64 bits; no live stream reaches 10⁹).
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}

/// A packager's answer to a playlist request.
public enum HLSPlaylistAnswer: Sendable, Hashable {
    /// The playlist (200, `application/vnd.apple.mpegurl`).
    case playlist(String)
    /// What the request waits for is not there yet: hold it, and ask again when the packager
    /// says something new can be served.
    case wait
    /// The request cannot be answered (400): malformed, or `_HLS_msn` more than two segments
    /// past the last one (RFC 8216bis §6.2.5.2).
    case badRequest(String)
}

/// A packager's answer to a request for a file of its playlist.
public enum HLSResourceState: Sendable, Hashable {
    /// The file.
    case available(HLSResource)
    /// A part or segment about to be written (the preload hint, or the next one): hold the
    /// request until it is.
    case upcoming
    /// No such file, or one that has left the window (404).
    case missing
}

/// A file of an HLS stream: an initialization segment, a media segment or a partial segment.
public struct HLSResource: Sendable, Hashable {
    /// Its bytes.
    public var bytes: [UInt8]
    /// Its `Content-Type`: `video/mp4` for an initialization segment, `video/iso.segment` for a
    /// segment or part (RFC 8216bis §4.3.2.5 and the CMAF media type).
    public var contentType: String
    /// True for every file of the stream: once written it never changes, so it may be cached
    /// (a playlist never is).
    public var isImmutable: Bool

    /// A resource of its parts.
    public init(bytes: [UInt8], contentType: String, isImmutable: Bool = true) {
        (self.bytes, self.contentType, self.isImmutable) = (bytes, contentType, isImmutable)
    }
}
