import Foundation
import H264
import H264Encoder
import Synchronization

/// Sends encoded frames as plain RTP (RFC 6184, packetization-mode 1) over UDP for
/// `h264 serve --rtp udp://HOST:PORT`, and writes the SDP that describes the stream.
///
/// Each packet leaves with one `sendmsg` of two `iovec`s: the RTP and payload headers, and the
/// payload as a slice of the encoded frame (no copy). Send errors (nobody listening yet, a full
/// socket buffer) drop the packet: RTP receivers cope with loss.
final class RTPSender: Sendable {
    /// The destination, parsed from `udp://HOST:PORT` (IPv4 literal or `localhost`).
    let host: String
    /// The destination port.
    let port: Int
    private let socketDescriptor: Int32
    private let destination: sockaddr_in
    private let packetizer: Locked<RTPPacketizer>
    private let sent = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)

    /// Opens a UDP socket for `url` (`udp://HOST:PORT`).
    init(url: String, maximumTransmissionUnit: Int) throws {
        guard url.hasPrefix("udp://"), let colon = url.lastIndex(of: ":"), colon > url.index(url.startIndex, offsetBy: 6),
              let port = Int(url[url.index(after: colon)...]), (1...65_535).contains(port) else {
            throw CLIError("--rtp wants udp://HOST:PORT, not \(url)")
        }
        var host = String(url[url.index(url.startIndex, offsetBy: 6)..<colon])
        if host == "localhost" { host = "127.0.0.1" }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw CLIError("--rtp: \(host) is not an IPv4 address")
        }
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw CLIError("--rtp: cannot open a UDP socket (errno \(errno))") }
        var bufferSize: Int32 = 1 << 20
        setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        self.host = host
        self.port = port
        self.socketDescriptor = descriptor
        self.destination = address
        self.packetizer = Locked(RTPPacketizer(configuration: .init(maximumTransmissionUnit: maximumTransmissionUnit)))
    }

    deinit { close(socketDescriptor) }

    /// Writes the SDP of the stream to `path`.
    func writeSessionDescription(format: FormatDescription, to path: String) throws {
        let sdp = SessionDescription(formatDescription: format, address: host, port: port)
        try CLIIO.write(Array(sdp.text.utf8), to: path)
    }

    /// Packetizes and sends one frame (SPS and PPS go before each IDR).
    func send(_ frame: EncodedFrame) throws(H264Error) {
        try packetizer.withLock { packetizer throws(H264Error) in
            try packetizer.packetize(avcc: frame.data, presentationTime: frame.presentationTimeStamp,
                                     formatDescription: frame.formatDescription) { packet in
                sendPacket(packet)
            }
        }
    }

    /// Packets sent and packets the socket refused.
    var statistics: (sent: Int, failed: Int) { (sent.load(ordering: .relaxed), failed.load(ordering: .relaxed)) }

    private func sendPacket(_ packet: RTPPacketizer.Packet) {
        var vectors = [
            iovec(iov_base: UnsafeMutableRawPointer(mutating: packet.prefix.baseAddress), iov_len: packet.prefix.count),
            iovec(iov_base: UnsafeMutableRawPointer(mutating: packet.payload.baseAddress), iov_len: packet.payload.count),
        ]
        var address = destination
        let result = withUnsafeMutablePointer(to: &address) { addressPointer in
            vectors.withUnsafeMutableBufferPointer { vectorPointer in
                var message = msghdr()
                message.msg_name = UnsafeMutableRawPointer(addressPointer)
                message.msg_namelen = socklen_t(MemoryLayout<sockaddr_in>.size)
                message.msg_iov = vectorPointer.baseAddress
                message.msg_iovlen = vectorPointer.count
                return sendmsg(socketDescriptor, &message, 0)
            }
        }
        if result == packet.byteCount {
            sent.add(1, ordering: .relaxed)
        } else {
            failed.add(1, ordering: .relaxed)
        }
    }
}
