#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import MediaCore

/// Writes a progressive MP4 file (ISO/IEC 14496-12/-14/-15) from compressed frames: the media
/// data goes to a temporary file beside the output as the frames come (never all in memory),
/// and ``finish()`` writes the output with `ftyp` and `moov` first, then the media data — a
/// "faststart" file that plays and seeks before it is fully downloaded. The boxes are
/// ``MP4ProgressiveMuxer``'s.
///
/// ```swift
/// let writer = try MP4Writer(path: "out.mp4")
/// for frame in frames { try writer.append(frame) }   // video and audio, each in decoding order
/// try writer.finish()
/// ```
///
/// Not thread-safe: one task writes.
public final class MP4Writer {
    /// The output's path.
    public let path: String
    /// The temporary media data file's path (`path` + `.mdat`), removed by ``finish()``.
    public var mediaDataPath: String { path + ".mdat" }
    private var muxer: MP4ProgressiveMuxer
    private var mediaData: UnsafeMutablePointer<FILE>?

    /// Starts a file at `path` (created at ``finish()``; the temporary media data file now).
    ///
    /// - Throws: `mp4FileError` when the temporary file cannot be created.
    public init(path: String, options: MP4ProgressiveMuxer.Options = .init()) throws(MediaError) {
        self.path = path
        muxer = MP4ProgressiveMuxer(options: options)
        mediaData = fopen(path + ".mdat", "w+b")
        guard mediaData != nil else { throw Self.fileError("cannot create", path + ".mdat") }
    }

    deinit {
        if let mediaData {
            fclose(mediaData)
            remove(mediaDataPath)
        }
    }

    /// Adds one frame (video or audio; in decoding order within its track).
    ///
    /// - Throws: `mp4WriterState` after ``finish()``; the errors of
    ///   ``MP4ProgressiveMuxer/append(_:)``; `mp4FileError` when the media data cannot be written.
    public func append(_ frame: CompressedFrame) throws(MediaError) {
        guard let mediaData else { throw MediaError(.mp4WriterState, field: "append", "a frame after finish()") }
        try write(try muxer.append(frame), to: mediaData, path: mediaDataPath)
    }

    /// Writes the file: `ftyp`, `moov`, `mdat` header, then the media data copied from the
    /// temporary file, which is removed. Calling it again does nothing.
    ///
    /// - Throws: `mp4FileError` when a file cannot be written or read; the sample entries'
    ///   errors.
    public func finish() throws(MediaError) {
        guard let mediaData else { return }
        defer {
            fclose(mediaData)
            remove(mediaDataPath)
            self.mediaData = nil
        }
        let (remaining, header) = try muxer.finish()
        try write(remaining, to: mediaData, path: mediaDataPath)
        guard fflush(mediaData) == 0, fseeko(mediaData, 0, SEEK_SET) == 0 else { throw Self.fileError("cannot read back", mediaDataPath) }
        guard let output = fopen(path, "wb") else { throw Self.fileError("cannot create", path) }
        defer { fclose(output) }
        try write(header, to: output, path: path)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, mediaData) }
            if count == 0 { break }
            try write(buffer[..<count], to: output, path: path)
        }
        guard ferror(mediaData) == 0 else { throw Self.fileError("cannot read", mediaDataPath) }
        guard fflush(output) == 0 else { throw Self.fileError("cannot write", path) }
    }

    /// Writes all of `bytes` to `file`.
    private func write(_ bytes: some Collection<UInt8>, to file: UnsafeMutablePointer<FILE>, path: String) throws(MediaError) {
        guard !bytes.isEmpty else { return }
        let written = bytes.withContiguousStorageIfAvailable { fwrite($0.baseAddress, 1, $0.count, file) } ?? 0
        guard written == bytes.count else { throw Self.fileError("cannot write", path) }
    }

    /// An `mp4FileError` naming the file and `errno`.
    private static func fileError(_ what: String, _ path: String) -> MediaError {
        MediaError(.mp4FileError, field: path, "\(what) \(path) (errno \(errno))")
    }
}
