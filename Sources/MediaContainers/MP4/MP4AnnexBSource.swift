public import MediaCore

/// An MP4 file's first video track as an Annex-B ``ByteSource``, read a frame at a time: what
/// reads Annex-B (a decoder fed in chunks, a file player) reads an MP4 through it without the
/// file in memory. Each frame comes in decoding order with its format's parameter sets where
/// FFmpeg's `h264_mp4toannexb` / `hevc_mp4toannexb` insert them; ``MP4Reader/annexB(fromMP4:)``
/// is the whole file read through it.
///
/// ```swift
/// var source = try MP4AnnexBSource(source: try MP4FileSource(path: "in.mp4"))
/// while let unit = try source.nextAccessUnit() { … }   // or read(into:) as any ByteSource
/// ```
public struct MP4AnnexBSource: ByteSource, Sendable {
    private var reader: MP4Reader
    /// The video track read.
    public let track: MP4Track
    /// The bytes of the frame being read out by ``read(into:)``, and how far.
    private var pending: [UInt8] = []
    private var position = 0

    /// Opens the file's first video track.
    ///
    /// - Parameter source: the file.
    /// - Throws: the errors of ``MP4Reader/init(source:)``; `missingParameterSet` (field `stsd`)
    ///   for a file without an H.264 or H.265 track.
    public init(source: some MP4ByteSource) throws(MediaError) {
        let reader = try MP4Reader(source: source)
        guard let video = reader.tracks.first(where: { $0.format?.video != nil }) else {
            throw MediaError(.missingParameterSet, field: "stsd", "no H.264 or H.265 track in the file")
        }
        self.init(reader: reader, track: video)
    }

    /// A video track of the file `reader` has opened (one of its ``MP4Reader/tracks``), from
    /// where the reader stands.
    ///
    /// - Parameters:
    ///   - reader: the opened file.
    ///   - track: the track to read; frames of the others are passed over.
    public init(reader: MP4Reader, track: MP4Track) {
        (self.reader, self.track) = (reader, track)
    }

    /// The next video frame as Annex-B (parameter sets before a keyframe) with the frame it
    /// came from, or nil after the last.
    ///
    /// - Returns: the Annex-B bytes and the frame (its times, format and keyframe flag).
    /// - Throws: the reader's errors (a file that cannot be read); a frame whose lengths lose
    ///   its framing is skipped with a warning (``takeWarnings()``).
    public mutating func nextAccessUnit() throws(MediaError) -> (annexB: [UInt8], frame: CompressedFrame)? {
        while let frame = try reader.next() {
            guard frame.trackID == track.trackID, let format = frame.frame.videoFormat else { continue }
            // Parameter sets where FFmpeg's *_mp4toannexb puts them: chosen by the sample's NAL
            // unit types (before an IDR picture, before a sample's first IRAP unit), not by its sync flag.
            return (try format.annexB(fromSample: frame.data, lengthSize: 4, withParameterSets: true), frame.frame)
        }
        return nil
    }

    /// Reads up to `buffer.count` bytes of the Annex-B stream.
    ///
    /// - Parameter buffer: where the bytes go.
    /// - Returns: how many bytes were written, 0 at the end of the track.
    /// - Throws: what ``nextAccessUnit()`` throws.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        var written = 0
        while written < buffer.count {
            if position == pending.count {
                guard let next = try nextAccessUnit() else { break }
                (pending, position) = (next.annexB, 0)
                continue
            }
            let count = min(buffer.count - written, pending.count - position)
            pending.withUnsafeBytes { bytes in
                (base + written).copyMemory(from: bytes.baseAddress! + position, byteCount: count)
            }
            (written, position) = (written + count, position + count)
        }
        return written
    }

    /// Hands the reader's warnings found so far to the caller and forgets them.
    public mutating func takeWarnings() -> [MediaError] { reader.takeWarnings() }
}
