import NIOCore

/// The RTP socket of a recording UDP session of an ``RTSPServer`` (a record path): passes each datagram from the
/// publisher's host to `receive`, and drops datagrams from anywhere else.
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
