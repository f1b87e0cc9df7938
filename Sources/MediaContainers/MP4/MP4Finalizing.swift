#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import MediaCore

/// A fragmented MP4 recording turned into a progressive one when it ends cleanly: the same
/// frames, with one index (`moov`) at the front, which every player scrubs (as mp4ff PR #557
/// finalises a recording). The fragmented file stays until the progressive one is complete, so
/// a crash in between loses nothing.
public enum MP4Finalizing {
    /// Rewrites the fragmented MP4 at `path` as a progressive MP4 at the same path (through
    /// `path` + `.progressive`, renamed over it once written).
    ///
    /// - Parameter path: a fragmented MP4 file (``FragmentedMP4FileWriter``'s).
    /// - Returns: the warnings of reading it (a cut-off last fragment, for one).
    /// - Throws: the reader's and the writer's errors; `mp4FileError` when the rename fails.
    @discardableResult
    public static func progressive(fromFragmented path: String) throws(MediaError) -> [MediaError] {
        let temporary = path + ".progressive"
        var reader = try MP4Reader(source: try MP4FileSource(path: path))
        let writer = try MP4Writer(path: temporary)
        do {
            while let frame = try reader.next() { try writer.append(frame.frame) }
            try writer.finish()
        } catch {
            remove(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            remove(temporary)
            throw MediaError(.mp4FileError, field: path, "cannot replace \(path) (errno \(errno))")
        }
        return reader.takeWarnings()
    }
}
