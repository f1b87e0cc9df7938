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
    private var file: UnsafeMutablePointer<FILE>?
    private var fragmentStart: Duration?

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
        if let fragment = try writer.fragment(before: next) {
            try write(fragment)
            // Whole fragments reach the file at once: a writer killed later leaves them playable.
            guard fflush(file) == 0 else { throw MediaError(.mp4FileError, field: path, "cannot write \(path) (errno \(errno))") }
        }
    }

    /// Writes `bytes` to the file.
    private func write(_ bytes: [UInt8]) throws(MediaError) {
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == bytes.count else { throw MediaError(.mp4FileError, field: path, "cannot write \(path) (errno \(errno))") }
    }
}
