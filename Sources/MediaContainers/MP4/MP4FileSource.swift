public import MediaCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file on disk as an ``MP4ByteSource``: opened read-only once, each read a `pread(2)` of just
/// the bytes asked for, so demuxing a large file keeps only the `moov`, the `moof`s and one
/// sample in memory. The descriptor is closed when the last copy of the source goes away.
///
/// With the MP4 file writers and ``MP4Finalizing``, the module's only I/O, kept here so that
/// the CLI and programs need not write it.
public final class MP4FileSource: MP4ByteSource {
    /// The open file's descriptor (immutable, and `pread` takes no shared offset: reads from
    /// several threads do not disturb each other).
    private let descriptor: Int32
    /// The file's size when it was opened.
    public let count: Int

    /// Opens the file at `path`.
    ///
    /// - Throws: `MediaError.Code.unsupported` (field `path`) when it cannot be opened or sized.
    public init(path: String) throws(MediaError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw MediaError(.unsupported, field: "path", "cannot open \(path) (errno \(errno))")
        }
        let end = lseek(fd, 0, SEEK_END)
        guard end >= 0 else {
            close(fd)
            throw MediaError(.unsupported, field: "path", "cannot size \(path) (errno \(errno))")
        }
        descriptor = fd
        count = Int(end)
    }

    deinit { close(descriptor) }

    /// Reads `count` bytes at `offset` with `pread`, retrying short reads.
    ///
    /// - Throws: `truncated` when the file ends sooner (it shrank since it was opened) or a read fails.
    public func read(at offset: Int, count: Int) throws(MediaError) -> ArraySlice<UInt8> {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + done, count - done, off_t(offset + done))
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                throw MediaError(.truncated, field: "sample", byteOffset: offset + done,
                                 "the file ends (or cannot be read) \(count - done) byte(s) short")
            }
            done += got
        }
        return buffer[...]
    }
}
