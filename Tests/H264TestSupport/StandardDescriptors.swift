import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps file descriptors 0, 1 and 2 of the test process open, so that no pipe or file the
/// tests open is given one of those numbers.
///
/// Why: a test run started with standard input closed (CI runs `.ci/run` with no standard input)
/// hands descriptor 0 to the next pipe it creates. Foundation's `Process` then lists that pipe
/// end among the descriptors to close in the child after setting up its standard streams, so the
/// child starts with descriptor 0 closed, and FFmpeg's first socket or input file becomes its
/// "keyboard": it read RTSP bytes such as `d` (cycle debug flags, `debug=1`) and `+` (raise the
/// log level) from it and flooded its standard error. Every launcher in `H264TestSupport` calls
/// ``ensureOpen()`` before it creates a pipe.
public enum StandardDescriptors {
    private static let lock = NSLock()

    /// Opens `/dev/null` on each of descriptors 0, 1 and 2 that is closed. Cheap (three
    /// `fcntl` calls) once they are open; safe from any thread.
    public static func ensureOpen() {
        lock.lock()
        defer { lock.unlock() }
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // `open` returns the lowest free number: this one, unless another thread has just
            // taken it (then it is open, which is all that is needed).
            let opened = open("/dev/null", O_RDWR)
            if opened > 2 { close(opened) }
        }
    }
}
