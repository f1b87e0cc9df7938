public import H264
public import HEVC
public import NIOCore
import NIOPosix
import Synchronization
public import RTP

/// Sends a live stream as plain RTP (H.264 by RFC 6184, packetization-mode 1; H.265 by RFC
/// 7798, by each frame's ``LiveFrame/format``) over UDP to one
/// destination (`h264 serve --rtp udp://HOST:PORT`), and describes it with an SDP that a
/// receiver (`h264 receive FILE.sdp`, `ffplay -protocol_whitelist file,udp,rtp FILE.sdp`) reads.
///
/// Send errors (nobody listening yet, a full socket buffer) drop the packet: RTP receivers cope
/// with loss. ``statistics`` counts both.
public final class RTPSender: Sendable {
    /// Packets sent and packets the socket refused.
    public struct Statistics: Sendable, Equatable {
        /// Datagrams the socket took.
        public var sent: Int
        /// Datagrams the socket refused.
        public var failed: Int
    }

    /// Where the packets go.
    public let destination: SocketAddress
    private let channel: any Channel
    private let packetizer: Locked<VideoRTPPacketizer>
    private let sent = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)

    private init(destination: SocketAddress, channel: any Channel, maximumTransmissionUnit: Int) {
        self.destination = destination
        self.channel = channel
        packetizer = Locked(VideoRTPPacketizer(configuration: .init(maximumTransmissionUnit: maximumTransmissionUnit)))
    }

    /// Opens a UDP socket that sends to `host`:`port` (an IP address literal).
    ///
    /// - Parameters:
    ///   - host: the destination's IP address (`127.0.0.1`, `::1`).
    ///   - port: the destination's UDP port (RTP; RTCP would be the next).
    ///   - group: the event loops of the socket.
    ///   - maximumTransmissionUnit: the largest packet, counted as for UDP over IPv4.
    ///   - sendBufferSize: the socket's kernel send buffer (`SO_SNDBUF`).
    /// - Throws: `SocketAddressError` for a host that is not an IP address; the error of
    ///   opening the socket.
    public static func start(host: String, port: Int, group: any EventLoopGroup, maximumTransmissionUnit: Int = 1200,
                             sendBufferSize: Int = 1 << 20) async throws -> RTPSender {
        let destination = try SocketAddress(ipAddress: host, port: port)
        let local = destination.protocol == .inet6 ? "::" : "0.0.0.0"
        let channel = try await DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(sendBufferSize))
            .bind(host: local, port: 0).get()
        return RTPSender(destination: destination, channel: channel, maximumTransmissionUnit: maximumTransmissionUnit)
    }

    /// The SDP describing the stream of `format` as a receiver at ``destination`` gets it.
    ///
    /// - Parameter format: the stream's format (its parameter sets go in `sprop-parameter-sets`).
    public func sessionDescription(format: FormatDescription) -> SessionDescription {
        sessionDescription(format: .h264(format))
    }

    /// The SDP describing the stream of `format`, H.264 or H.265, as a receiver at
    /// ``destination`` gets it.
    ///
    /// - Parameter format: the stream's format (its parameter sets go in `sprop-parameter-sets`,
    ///   or `sprop-vps`, `sprop-sps` and `sprop-pps`).
    public func sessionDescription(format: VideoFormatDescription) -> SessionDescription {
        SessionDescription(format: format, address: destination.ipAddress ?? "0.0.0.0", port: destination.port ?? 0)
    }

    /// Packetizes and sends one access unit (the parameter sets go before each keyframe).
    ///
    /// - Parameters:
    ///   - frame: the access unit, length-prefixed.
    ///   - presentationTime: its presentation time (the RTP timestamp's source, 90 kHz).
    /// - Throws: `MediaError` for an access unit the packetizer cannot send.
    public func send(_ frame: LiveFrame, presentationTime: Duration) throws(MediaError) {
        // The video track's sender: an audio frame is not sent here.
        guard let format = frame.format else { return }
        var datagrams: [AddressedEnvelope<ByteBuffer>] = []
        let allocator = channel.allocator, destination = self.destination
        try packetizer.withLock { packetizer throws(MediaError) in
            try packetizer.packetize(avcc: frame.avcc, presentationTime: presentationTime, format: format) { packet in
                var buffer = allocator.buffer(capacity: packet.byteCount)
                buffer.writeBytes(packet.prefix)
                buffer.writeBytes(packet.payload)
                datagrams.append(AddressedEnvelope(remoteAddress: destination, data: buffer))
            }
        }
        let channel = self.channel
        channel.eventLoop.execute { [datagrams] in
            for datagram in datagrams {
                let promise = channel.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenComplete { result in
                    switch result {
                    case .success: self.sent.add(1, ordering: .relaxed)
                    case .failure: self.failed.add(1, ordering: .relaxed)
                    }
                }
                channel.write(datagram, promise: promise)
            }
            channel.flush()
        }
    }

    /// Packets sent and packets the socket refused, so far.
    public var statistics: Statistics {
        Statistics(sent: sent.load(ordering: .relaxed), failed: failed.load(ordering: .relaxed))
    }

    /// Closes the socket (packets queued before are sent first).
    public func shutdown() async {
        try? await channel.close()
    }
}

extension RTPSender: LiveSink {
    /// Sends a broadcaster's frames (``Broadcaster/attach(_:limits:)``): each packetized and sent
    /// at its presentation time's RTP timestamp, as ``send(_:presentationTime:)``.
    ///
    /// - Parameter frames: the stream's frames from a keyframe on.
    /// - Throws: `MediaError` for an access unit the packetizer cannot send.
    public func consume(_ frames: LiveFrameStream) async throws {
        for await frame in frames {
            guard let live = LiveFrame(frame) else { continue }
            try send(live, presentationTime: frame.presentationTime)
        }
    }
}
