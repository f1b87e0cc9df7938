#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tests' blocking TCP connection to 127.0.0.1: the one place that makes the socket and
/// connects it, for `TCPClient`, the hand-written RTSP connections and viewers.
public enum LoopbackTCP {
    /// A socket connected to 127.0.0.1:`port`; `configure` sets its options before it connects
    /// (a receive buffer, timestamps, a timeout).
    ///
    /// - Throws: `LoopbackError` when the socket cannot be made or the connection is refused.
    public static func connect(port: Int, configure: (Int32) -> Void = { _ in }) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackError("socket: \(errno)") }
        configure(fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                Darwin.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw LoopbackError("connect: \(error)")
        }
        return fd
    }

    /// A TCP socket bound to 127.0.0.1 and a port of its own, not listening: connections to
    /// ``port`` are refused while it lives, and no other process can bind the port.
    public final class NotListening {
        /// The socket.
        public let descriptor: Int32
        /// Its port.
        public let port: Int

        public init() throws {
            let (descriptor, port) = try LoopbackTCP.bindAnyPort()
            self.descriptor = descriptor
            self.port = port
        }

        deinit { close(descriptor) }
    }

    /// A TCP socket bound to 127.0.0.1 and port 0, and the port it got.
    static func bindAnyPort() throws -> (descriptor: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            let error = errno
            close(fd)
            throw LoopbackError("bind: \(error)")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago: a socket bound to port 0, closed.
    ///
    /// Only a candidate for a peer that must be told its port and cannot bind port 0 or report
    /// the one it took (nginx, `ffmpeg -listen 1`: see ``PeerPort``, which starts such a peer
    /// and waits for its own socket on the port, trying another when it could not bind), or a
    /// port that nothing listens on (a refused connection). Our own servers bind port 0 and
    /// report theirs (`listening` events, the library's `port`).
    public static func freePort() throws -> Int {
        let (descriptor, port) = try bindAnyPort()
        close(descriptor)
        return port
    }
}
