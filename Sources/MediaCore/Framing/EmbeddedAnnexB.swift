/// The one rule for Annex-B found where it does not belong: a start code (`00 00 01` or
/// `00 00 00 01`) where an AVCC length prefix, or an RTP payload's NAL unit header, was expected.
///
/// Some writers do this: Chrome's MediaRecorder puts Annex-B access units into MP4/Matroska
/// samples, and V380 cameras send RTP payloads that begin with a start code. FFmpeg's decoder
/// reads both (its NAL unit splitter falls back to searching for start codes; its RTP depayloader
/// passes NAL unit type 0 through to that splitter). This rule reads them the same way:
/// - Where a length was expected, the data is Annex-B when it begins with a start code and,
///   read as lengths from there, fails before three whole NAL units (or before the end, when
///   fewer remain): Annex-B bytes read as lengths fail within two steps, while a genuine length
///   of 256–511 bytes (`00 00 01 xx`) is followed by more valid lengths. From there on
///   everything is read as Annex-B. Once the lengths from such a field have held, the later
///   fields lie on the same walk and are not checked again, so a truncated AVCC stream still
///   ends in its `lengthPastEnd` error rather than being read as Annex-B near its end.
/// - Where an RTP payload's NAL unit header was expected, the payload is Annex-B when it begins
///   with a start code (its first byte, read as a header, would be the unspecified type 0).
/// - The Annex-B part is split by the one Annex-B scanner; a unit with `forbidden_zero_bit` set
///   there is damaged (framing junk, a truncated unit's remains): reported and skipped.
package enum EmbeddedAnnexB {
    /// How many whole NAL units a length-prefix reading must walk before failing to count as
    /// genuine (a truncated AVCC stream) rather than Annex-B read as lengths.
    package static let genuineLengthCount = 3

    /// Whether the length-prefix reading of `buffer` from `position` (where a length field
    /// begins like a start code) fails as Annex-B read as lengths does: before
    /// ``genuineLengthCount`` whole NAL units, or before the end when fewer remain.
    package static func lengthsFail(in buffer: UnsafeRawBufferPointer, from position: Int, lengthSize: Int,
                            allowingEmptyNALUnits: Bool) -> Bool {
        var cursor = position
        for _ in 0..<genuineLengthCount where cursor < buffer.count {
            guard let length = try? AVCC.readLength(in: buffer, at: cursor, lengthSize: lengthSize),
                  length > 0 || allowingEmptyNALUnits else { return true }
            cursor += lengthSize + length
        }
        return false
    }

    /// Calls `body` with each NAL unit of the Annex-B data in `buffer[start...]` (ranges in
    /// `buffer`), and `damaged` with an error for each unit whose `forbidden_zero_bit` is set
    /// (which is skipped).
    package static func forEachNALUnit(in buffer: UnsafeRawBufferPointer, from start: Int,
                               _ body: (Range<Int>) -> Void, damaged: (MediaError) -> Void) {
        let rest = UnsafeRawBufferPointer(rebasing: buffer[start...])
        AnnexB.forEachNALUnit(in: rest) { location in
            let range = (start + location.range.lowerBound)..<(start + location.range.upperBound)
            if buffer[range.lowerBound] & 0x80 != 0 {
                damaged(MediaError(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: range.lowerBound,
                                  "a damaged NAL unit of \(range.count) bytes in Annex-B data: skipped"))
            } else {
                body(range)
            }
        }
    }

    /// The warning for Annex-B found at `byteOffset` where `expected` (a field name) was due.
    package static func warning(byteOffset: Int, expected field: String, _ context: String) -> MediaError {
        MediaError(.unexpectedStartCode, field: field, byteOffset: byteOffset,
                  "a start code where a \(context) was expected: read as Annex-B from here")
    }
}
