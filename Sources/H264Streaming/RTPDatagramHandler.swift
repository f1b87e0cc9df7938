import NIOCore

/// A UDP socket of an ``RTSPServer`` session or of an ``RTSPClient``: passes each datagram from
/// the peer's host to `receive` (a publisher's RTP, a viewer's RTCP receiver reports), and
/// drops datagrams from anywhere else.
final class RTPDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let publisher: String?
    private let receive: (UnsafeRawBufferPointer) -> Void

    /// A handler that takes datagrams from the IP address `publisher` only (nil: from anywhere).
    init(from publisher: String?, receive: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.publisher = publisher
        self.receive = receive
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        if let publisher, envelope.remoteAddress.ipAddress != publisher { return }
        envelope.data.withUnsafeReadableBytes { receive($0) }
    }
}
