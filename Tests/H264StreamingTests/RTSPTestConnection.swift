import H264
import H264Streaming
import NIOCore
import NIOPosix
import RTP
import RTSPMessages

/// A test's RTSP connection on NIO: sends requests, and reads the messages the server sends
/// (answers and interleaved frames) with the library's `RTSPMessageReader`, in order.
final class RTSPTestConnection {
    private let channel: any Channel
    private var messages: AsyncStream<ByteBuffer>.AsyncIterator
    private var reader = RTSPMessageReader()
    private var cSeq = 0

    /// Connects to 127.0.0.1:`port`.
    init(port: Int, group: any EventLoopGroup) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(continuation: continuation))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        messages = stream.makeAsyncIterator()
    }

    /// Sends `method` on `uri` and returns its answer (interleaved frames before it are dropped).
    func request(_ method: String, _ uri: String, headers: [(name: String, value: String)] = [],
                 body: [UInt8] = []) async throws -> RTSPResponse {
        cSeq += 1
        let request = RTSPRequest(method: method, uri: uri, headers: [("CSeq", String(cSeq))] + headers, body: body)
        try await channel.writeAndFlush(ByteBuffer(bytes: request.bytes))
        while let message = try await next() {
            if case .response(let response) = message { return response }
        }
        throw ChannelError.eof
    }

    /// Sends `packet` interleaved on `channel` (`$`, channel, length, packet).
    func send(interleaved channel: UInt8, _ packet: [UInt8]) async throws {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(ascii: "$"))
        buffer.writeInteger(channel)
        buffer.writeInteger(UInt16(packet.count))
        buffer.writeBytes(packet)
        try await self.channel.writeAndFlush(buffer)
    }

    /// Packetizes `frames` (RFC 6184, one packetizer, 40 ms apart) and sends every packet
    /// interleaved on channel 0, as a publisher recording over TCP does.
    func record(_ frames: [LiveFrame], format: FormatDescription) async throws {
        var packetizer = RTPPacketizer()
        for (index, frame) in frames.enumerated() {
            var packets: [[UInt8]] = []
            try packetizer.packetize(avcc: frame.avcc, presentationTime: .milliseconds(40 * index),
                                     formatDescription: format) { packets.append(Array($0.prefix) + Array($0.payload)) }
            for packet in packets { try await send(interleaved: 0, packet) }
        }
    }

    /// The next message from the server; nil once the connection has closed.
    func next() async throws -> RTSPMessageReader.Message? {
        while true {
            if let message = try reader.next() { return message }
            guard let bytes = await messages.next() else { return nil }
            reader.append(bytes.readableBytesView)
        }
    }

    func close() async { try? await channel.close() }

    /// Hands what arrives to the stream, which ends when the connection closes.
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let continuation: AsyncStream<ByteBuffer>.Continuation
        init(continuation: AsyncStream<ByteBuffer>.Continuation) { self.continuation = continuation }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { continuation.yield(unwrapInboundIn(data)) }
        func channelInactive(context: ChannelHandlerContext) { continuation.finish() }
    }
}
