public import H264
public import NIOCore
import NIOPosix
public import RTP

/// Receives a plain RTP stream of either codec (H.264 by RFC 6184, H.265 by RFC 7798) over UDP as
/// an SDP describes it (`h264 receive FILE.sdp`): binds the SDP's port, depacketizes what
/// arrives (codec, payload type and parameter sets from the SDP, `VideoRTPDepacketizer`) and
/// delivers the events — frames with their RTP timestamps, format changes, losses,
/// diagnostics — as an `AsyncSequence`.
///
/// The sequence ends at ``shutdown()`` (``Ending/stopped``) or when no packet came for the idle
/// timeout (``Ending/idle``); the depacketizer is flushed first. At most ``bufferLimit`` events
/// wait for the reader: past that, events are dropped (``droppedEvents``), and the frames after a
/// dropped one up to the next keyframe too — never a broken GOP.
public final class RTPReceiver: AsyncSequence, Sendable {
    /// One event of the stream.
    public typealias Element = VideoRTPDepacketizer.Event

    /// Why the sequence ended.
    public enum Ending: Sendable, Equatable {
        /// No packet came for the idle timeout.
        case idle
        /// ``RTPReceiver/shutdown()`` ended it.
        case stopped
    }

    private let channel: any Channel
    private let queue: FrameEventQueue<Element, Ending>
    private let handler: NIOLoopBound<RTPReceiverHandler>
    private let state: Locked<RTPReceptionStatistics>

    private init(channel: any Channel, queue: FrameEventQueue<Element, Ending>, handler: NIOLoopBound<RTPReceiverHandler>,
                 state: Locked<RTPReceptionStatistics>) {
        self.channel = channel
        self.queue = queue
        self.handler = handler
        self.state = state
    }

    /// The events that may wait for the reader.
    public static let bufferLimit = 1024

    /// Events dropped because the reader fell ``bufferLimit`` behind, with the frames after
    /// them up to the next keyframe.
    public var droppedEvents: Int { queue.dropped }

    /// The address the socket is bound to.
    public var localAddress: SocketAddress? { channel.localAddress }

    /// Why the sequence ended; nil while it goes on.
    public var ending: Ending? { queue.ending }

    /// The depacketizer's counts so far.
    public var statistics: RTPReceptionStatistics { state.withLock { $0 } }

    /// Binds `host`:`port` (the SDP's port unless given) and starts receiving.
    ///
    /// - Parameters:
    ///   - description: the stream's SDP.
    ///   - host: the address to bind (`0.0.0.0`: every IPv4 address).
    ///   - port: the UDP port; nil: the SDP's.
    ///   - group: the event loops of the socket.
    ///   - reorderWindow: how many later packets may wait for a missing one before it counts as lost.
    ///   - idleTimeout: the sequence ends when no packet came for this long; nil: never.
    ///   - receiveBufferSize: the socket's kernel receive buffer (`SO_RCVBUF`).
    /// - Throws: `MediaError` for an SDP this receiver cannot take (H.264 packetization-mode 2); the
    ///   error of binding the port.
    public static func start(description: SessionDescription, host: String = "0.0.0.0", port: Int? = nil,
                             group: any EventLoopGroup, reorderWindow: Int = 16, idleTimeout: Duration? = nil,
                             receiveBufferSize: Int = 4 << 20) async throws -> RTPReceiver {
        let depacketizer = try VideoRTPDepacketizer(description, reorderWindow: reorderWindow)
        let queue = FrameEventQueue<Element, Ending>(limit: bufferLimit, keyframeFlag: \.keyframeFlag)
        let state = Locked(RTPReceptionStatistics())
        let loop = group.next()
        let handler = try await loop.submit {
            NIOLoopBound(RTPReceiverHandler(depacketizer: depacketizer, queue: queue, state: state,
                                            idleTimeout: idleTimeout), eventLoop: loop)
        }.get()
        let channel = try await DatagramBootstrap(group: loop)
            .channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBufferSize))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler.value) }
            }
            .bind(host: host, port: port ?? description.port).get()
        return RTPReceiver(channel: channel, queue: queue, handler: handler, state: state)
    }

    /// The events, in arrival order.
    public func makeAsyncIterator() -> AsyncStream<Element>.AsyncIterator { queue.stream.makeAsyncIterator() }

    /// Closes the socket and ends the sequence (``Ending/stopped``, after the depacketizer's
    /// last events).
    public func shutdown() async {
        let handler = self.handler
        try? await channel.eventLoop.submit { handler.value.end(.stopped) }.get()
        try? await channel.close()
    }
}

/// The socket's handler: depacketizes each datagram and hands the events on; checks the idle
/// timeout. On the socket's event loop.
final class RTPReceiverHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private var depacketizer: VideoRTPDepacketizer
    private let queue: FrameEventQueue<RTPReceiver.Element, RTPReceiver.Ending>
    private let state: Locked<RTPReceptionStatistics>
    private let idleTimeout: Duration?
    private var idleTimer: IdleTimer?
    private var ended = false

    init(depacketizer: VideoRTPDepacketizer, queue: FrameEventQueue<RTPReceiver.Element, RTPReceiver.Ending>,
         state: Locked<RTPReceptionStatistics>, idleTimeout: Duration?) {
        self.depacketizer = depacketizer
        self.queue = queue
        self.state = state
        self.idleTimeout = idleTimeout
    }

    func channelActive(context: ChannelHandlerContext) {
        idleTimer = IdleTimer(timeout: idleTimeout, loop: context.eventLoop) { [self] in end(.idle) }
        idleTimer?.start()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !ended else { return }
        idleTimer?.heard()
        unwrapInboundIn(data).data.withUnsafeReadableBytes { depacketizer.append(packet: $0) }
        deliver()
    }

    private func deliver() {
        while let event = depacketizer.next() { queue.deliver(event) }
        let statistics = RTPReceptionStatistics(counting: depacketizer)
        state.withLock { $0 = statistics }
    }

    /// Flushes the depacketizer and ends the sequence.
    func end(_ ending: RTPReceiver.Ending) {
        guard !ended else { return }
        ended = true
        idleTimer?.cancel()
        depacketizer.finish()
        deliver()
        queue.end(ending)
    }
}
