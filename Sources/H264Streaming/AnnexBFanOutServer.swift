public import NIOCore
import NIOPosix

/// The raw live fan-out (`h264 serve --port`): a TCP server whose every client gets the live
/// stream of a ``Broadcaster`` as an Annex-B byte stream (ffplay `-f h264 tcp://HOST:PORT`).
///
/// A client joins the broadcaster when it connects (so it starts with SPS, PPS and an IDR made
/// for it), leaves when it closes, and what it sends is ignored.
public final class AnnexBFanOutServer: Sendable {
    /// The listening channel.
    private let channel: any Channel

    /// The address the server listens on (with the port the system chose for port 0).
    public var localAddress: SocketAddress? { channel.localAddress }

    private init(channel: any Channel) { self.channel = channel }

    /// Starts listening on `host`:`port` (0: a free port).
    ///
    /// - Parameters:
    ///   - host: the address to listen on (`127.0.0.1`, `0.0.0.0`, `::1`).
    ///   - port: the TCP port; 0 takes a free one (see ``localAddress``).
    ///   - group: the event loops of the listener and its clients.
    ///   - broadcaster: the stream every client joins.
    ///   - sendBufferSize: each client's kernel send buffer (`SO_SNDBUF`); nil: the system's.
    ///     Smaller keeps slow clients closer to live.
    /// - Throws: the error of binding the address.
    public static func start(host: String, port: Int, group: any EventLoopGroup, broadcaster: Broadcaster,
                             sendBufferSize: Int? = nil) async throws -> AnnexBFanOutServer {
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
        if let sendBufferSize {
            bootstrap = bootstrap.childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(sendBufferSize))
        }
        let channel = try await bootstrap
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AnnexBFanOutHandler(broadcaster: broadcaster))
                }
            }
            .bind(host: host, port: port).get()
        return AnnexBFanOutServer(channel: channel)
    }

    /// Stops listening. The clients stay with the broadcaster until
    /// ``Broadcaster/closeAll(flushing:flushTimeout:)`` (so the last frames can still reach them).
    public func shutdown() async {
        try? await channel.close()
    }
}

/// One client connection of an ``AnnexBFanOutServer``: registers with the broadcaster when it
/// becomes active, leaves when it closes, writes each frame's Annex-B bytes, and ignores what
/// the client sends.
final class AnnexBFanOutHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = BroadcastWrite
    typealias OutboundOut = ByteBuffer

    private let broadcaster: Broadcaster
    private var id: Int?

    init(broadcaster: Broadcaster) { self.broadcaster = broadcaster }

    func channelActive(context: ChannelHandlerContext) {
        id = broadcaster.add(context.channel, kind: .annexB)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let id { broadcaster.remove(id) }
        id = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Viewers have nothing to say; what they send is dropped.
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .flush:
            context.write(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: promise)
        case .frame(let frame):
            do {
                context.write(wrapOutboundOut(try frame.annexBBytes(allocator: context.channel.allocator)), promise: promise)
            } catch {
                promise?.fail(error)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or broken connection: the client is gone.
        context.close(promise: nil)
    }
}
