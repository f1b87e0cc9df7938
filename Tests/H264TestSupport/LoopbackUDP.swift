import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A UDP socket on 127.0.0.1 and a free port, with an 8 MB receive buffer (senders here are
/// not paced): what the RTP tests of both codecs receive a sender's packets on, and send their own from.
public final class LoopbackUDP {
    /// The socket.
    public let descriptor: Int32
    /// The port it is bound to.
    public let port: Int

    /// Binds a socket to 127.0.0.1 and a free port.
    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.descriptor = descriptor
        var size: Int32 = 8 << 20
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        guard descriptor >= 0, bound == 0, self.port > 0 else { throw LoopbackError("cannot bind a UDP socket") }
    }

    deinit { close(descriptor) }

    /// Receives datagrams until `senderDone()` and then half a second passes without one
    /// (at most 60 s in all).
    public func receive(until senderDone: () -> Bool) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 500) > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 { packets.append(Array(buffer[0..<count])) }
            } else if senderDone() {
                break
            }
        }
        return packets
    }

    /// Sends `packets` to 127.0.0.1:`port`, one datagram each, pausing a millisecond after
    /// every `burst` of them (a receiver's default socket buffer holds little).
    public func send(_ packets: [[UInt8]], to port: Int, burst: Int = 16) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        for (index, packet) in packets.enumerated() {
            _ = packet.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            if index % burst == burst - 1 { usleep(1_000) }
        }
    }

    /// Starts a program (`arguments`: its name, looked up on PATH, and its arguments) that
    /// sends RTP to this socket, and receives until it exits.
    ///
    /// - Returns: the datagrams, and the program's exit status.
    public func receive(fromProgram arguments: [String]) throws -> (packets: [[UInt8]], status: Int32) {
        let process = try Subprocess.launch("/usr/bin/env", arguments)
        let packets = receive { !process.isRunning }
        process.waitUntilExit()
        return (packets, process.terminationStatus)
    }

    /// A `gst-launch-1.0` command that sends a raw stream `file` with GStreamer's `payloader`
    /// (`rtph264pay`, `rtph265pay`) after its `parser` to this socket: packets of at most 1200
    /// bytes, parameter sets before every keyframe, aggregation as `aggregateMode` says.
    public func gstreamerSender(file: String, parser: String, payloader: String, aggregateMode: String) -> [String] {
        ["gst-launch-1.0", "-q", "filesrc", "location=\(file)", "!", parser, "!",
         payloader, "aggregate-mode=\(aggregateMode)", "config-interval=-1", "mtu=1200", "!",
         "udpsink", "host=127.0.0.1", "port=\(port)", "sync=false"]
    }
}
