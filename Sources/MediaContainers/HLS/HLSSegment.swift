/// A media segment of an HLS stream as a packager keeps it: the bytes of its parts, one after
/// the other (`moof` + `mdat` each), and what its playlist lines say.
struct HLSSegment: Sendable {
    /// A partial segment (`EXT-X-PART`): a range of the segment's bytes.
    struct Part: Sendable {
        /// The part's bytes in ``HLSSegment/bytes``.
        var range: Range<Int>
        /// Its duration (the next part's start − its start).
        var duration: Duration
        /// True when it begins with a keyframe (the playlist does not say `INDEPENDENT=YES`: see `render`).
        var isIndependent: Bool
    }

    /// Its Media Sequence Number.
    var sequence: Int
    /// The initialization segment it needs (`init-N.mp4`).
    var map: Int
    /// True when a discontinuity comes before it (`EXT-X-DISCONTINUITY`).
    var discontinuity: Bool
    /// The time its first frame arrived, since 1970 (`EXT-X-PROGRAM-DATE-TIME`); nil: not said.
    var programDateTime: Duration?
    /// The decoding time of its first frame, on the source's clock.
    var start: Duration
    /// Its parts so far.
    var parts: [Part] = []
    /// Its bytes so far.
    var bytes: [UInt8] = []
    /// Its duration, once it is complete; nil while it is written.
    var duration: Duration?
    /// True when it begins with a keyframe.
    var isIndependent: Bool

    /// The sum of its parts' durations.
    var partsDuration: Duration { parts.reduce(.zero) { $0 + $1.duration } }

    /// The file name of the segment.
    var name: String { "seg-\(sequence).m4s" }

    /// The file name of part `index`.
    func partName(_ index: Int) -> String { "part-\(sequence)-\(index).m4s" }
}

/// The names of an HLS stream's files: `init-N.mp4`, `seg-N.m4s`, `part-N-I.m4s`.
enum HLSResourceName: Hashable {
    case initialization(Int)
    case segment(Int)
    case part(Int, Int)

    /// The name `name` is, or nil.
    init?(_ name: Substring) {
        func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(text)
        }
        if name.hasPrefix("init-"), name.hasSuffix(".mp4"), let index = number(name.dropFirst(5).dropLast(4)) {
            self = .initialization(index)
        } else if name.hasPrefix("seg-"), name.hasSuffix(".m4s"), let sequence = number(name.dropFirst(4).dropLast(4)) {
            self = .segment(sequence)
        } else if name.hasPrefix("part-"), name.hasSuffix(".m4s") {
            let fields = name.dropFirst(5).dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
            guard fields.count == 2, let sequence = number(fields[0]), let index = number(fields[1]) else { return nil }
            self = .part(sequence, index)
        } else {
            return nil
        }
    }
}
