#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import MediaCore

/// Writes a fragmented MP4 file with ``FragmentedMP4Writer``: the initialization segment at
/// once, then one fragment per video keyframe (per GOP, or per ``maximumFragmentDuration`` when
/// set; an audio-only file cuts one per ``audioFragmentDuration``), each written and flushed
/// when the next begins, so the file is playable up to its last whole fragment if the writer
/// dies.
///
/// ```swift
/// let writer = try FragmentedMP4FileWriter(path: "out.mp4", formats: [.video(format)])
/// for frame in frames { try writer.append(frame) }
/// try writer.finish()
/// ```
///
/// A file has one initialization segment: a frame of another format than its track's ends
/// the fragment before it and is refused with `mp4WriterState` (field `format`); start another
/// file with the new formats (the recorder's segment rotation). Not thread-safe.
public final class FragmentedMP4FileWriter {
    /// The output's path.
    public let path: String
    /// How much audio an audio-only file puts in one fragment.
    public var audioFragmentDuration: Duration = .seconds(1)
    /// The longest fragment of a file with video: a GOP longer than this is cut into several
    /// fragments (the later ones start without a keyframe), so a recorder killed mid-GOP loses
    /// at most this much. Nil: one fragment per GOP.
    public var maximumFragmentDuration: Duration?
    private var writer: FragmentedMP4Writer
    /// The file's tracks' formats (its initialization segment's).
    public var formats: [MediaFormatDescription] { writer.formats }
    /// The fragments written so far, in file order (an HLS playlist lists them by byte range).
    public private(set) var fragments: [Fragment] = []
    /// The size of the initialization segment (`ftyp` + `moov`) at the start of the file.
    public private(set) var initializationSize = 0
    private var file: UnsafeMutablePointer<FILE>?
    private var fragmentStart: Duration?
    /// The bytes written so far.
    private var written = 0
    /// The first and last decoding times of the fragment's leading track (the video, else the
    /// audio), whether it begins with a keyframe, and the last interval between two of its frames.
    private var lead: (first: Duration, last: Duration, keyframe: Bool)?
    private var leadInterval: Duration?

    /// A fragment (`moof` + `mdat`) as written: where it is in the file and what it holds.
    public struct Fragment: Sendable, Hashable {
        /// Its first byte's offset in the file.
        public var offset: Int
        /// Its size in bytes.
        public var size: Int
        /// Its duration: from its first frame of the leading track (the video, else the audio)
        /// to the next fragment's, or to its last frame's end.
        public var duration: Duration
        /// True when it begins with a video keyframe (always for an audio-only file).
        public var startsWithKeyframe: Bool

        /// A fragment of its parts.
        ///
        /// - Parameters:
        ///   - offset: its offset in the file.
        ///   - size: its size.
        ///   - duration: its duration.
        ///   - startsWithKeyframe: true when it begins with a keyframe.
        public init(offset: Int, size: Int, duration: Duration, startsWithKeyframe: Bool) {
            (self.offset, self.size, self.duration, self.startsWithKeyframe) = (offset, size, duration, startsWithKeyframe)
        }
    }

    /// Creates the file at `path` and writes the initialization segment of `formats`.
    ///
    /// - Throws: the errors of ``FragmentedMP4Writer/init(formats:options:)``; `mp4FileError`.
    public init(path: String, formats: [MediaFormatDescription], options: FragmentedMP4Writer.Options = .init()) throws(MediaError) {
        self.path = path
        writer = try FragmentedMP4Writer(formats: formats, options: options)
        let segment = try writer.initializationSegment()
        file = fopen(path, "wb")
        guard file != nil else { throw MediaError(.mp4FileError, field: path, "cannot create \(path) (errno \(errno))") }
        try write(segment)
        initializationSize = segment.count
        guard fflush(file) == 0 else { throw MediaError(.mp4FileError, field: path, "cannot write \(path) (errno \(errno))") }
    }

    deinit { if let file { fclose(file) } }

    /// Adds one frame; a video keyframe first writes the fragment of the frames before it.
    ///
    /// - Throws: `mp4WriterState` after ``finish()`` or for a frame whose format differs from
    ///   its track's (after writing the frames before it); the errors of
    ///   ``FragmentedMP4Writer/append(_:)``; `mp4FileError`.
    public func append(_ frame: CompressedFrame) throws(MediaError) {
        guard file != nil else { throw MediaError(.mp4WriterState, field: "append", "a frame after finish()") }
        let hasVideo = writer.formats.contains { $0.video != nil }
        let longest = hasVideo ? maximumFragmentDuration : audioFragmentDuration
        let full = fragmentStart.flatMap { start in longest.map { frame.decodeTime - start >= $0 } } ?? false
        let cuts = (hasVideo && frame.isVideoKeyframe) || full
        if cuts { try flush(before: frame) }
        if !writer.formats.contains(frame.format), writer.formats.contains(where: { ($0.video != nil) == (frame.format.video != nil) }) {
            try flush()
            throw MediaError(.mp4WriterState, field: "format", "the track's format changed: start another file")
        }
        if fragmentStart == nil { fragmentStart = frame.decodeTime }
        _ = try writer.append(frame)
        if (frame.format.video != nil) == hasVideo {
            if let lead, frame.decodeTime > lead.last { leadInterval = frame.decodeTime - lead.last }
            lead = (lead?.first ?? frame.decodeTime, frame.decodeTime, lead?.keyframe ?? (!hasVideo || frame.isVideoKeyframe))
        }
    }

    /// Writes the buffered frames as a fragment and closes the file. Calling it again does
    /// nothing.
    ///
    /// - Throws: `mp4FileError`; the errors of ``FragmentedMP4Writer/fragment(before:)``.
    public func finish() throws(MediaError) {
        guard let file else { return }
        defer {
            fclose(file)
            self.file = nil
        }
        try flush()
        guard fflush(file) == 0 else { throw MediaError(.mp4FileError, field: path, "cannot write \(path) (errno \(errno))") }
    }

    /// Writes the buffered frames as one fragment.
    private func flush(before next: CompressedFrame? = nil) throws(MediaError) {
        fragmentStart = nil
        let lead = self.lead
        self.lead = nil
        if let fragment = try writer.fragment(before: next) {
            let hasVideo = writer.formats.contains { $0.video != nil }
            var duration = Duration.zero
            if let lead {
                let nextTime = next.flatMap { ($0.format.video != nil) == hasVideo && $0.decodeTime > lead.last ? $0.decodeTime : nil }
                let fallback = leadInterval ?? (hasVideo ? .milliseconds(40) : .zero)
                duration = (nextTime ?? lead.last + fallback) - lead.first
            }
            fragments.append(Fragment(offset: written, size: fragment.count, duration: duration, startsWithKeyframe: lead?.keyframe ?? false))
            try write(fragment)
            // Whole fragments reach the file at once: a writer killed later leaves them playable.
            guard fflush(file) == 0 else { throw MediaError(.mp4FileError, field: path, "cannot write \(path) (errno \(errno))") }
        }
    }

    /// Writes `bytes` to the file.
    private func write(_ bytes: [UInt8]) throws(MediaError) {
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == bytes.count else { throw MediaError(.mp4FileError, field: path, "cannot write \(path) (errno \(errno))") }
        self.written += bytes.count
    }
}
