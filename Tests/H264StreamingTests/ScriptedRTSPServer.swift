import H264
import NIOCore
import NIOPosix
import RTSPMessages

/// A camera on 127.0.0.1 whose answers a test writes: `answer` gets every request (in order, on
/// the loop) and returns the response; ``requests`` yields each request as it comes.
final class ScriptedRTSPServer: Sendable {
    let channel: any Channel
    let requests: AsyncStream<RTSPRequest>

    init(group: any EventLoopGroup, answer: @escaping @Sendable (RTSPRequest) -> RTSPResponse) async throws {
        let (requests, continuation) = AsyncStream.makeStream(of: RTSPRequest.self)
        self.requests = requests
        channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(Answering(answer: answer, continuation: continuation))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    var port: Int { channel.localAddress?.port ?? 0 }

    func close() async { try? await channel.close() }

    private final class Answering: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var reader = RTSPMessageReader()
        private let answer: @Sendable (RTSPRequest) -> RTSPResponse
        private let continuation: AsyncStream<RTSPRequest>.Continuation

        init(answer: @escaping @Sendable (RTSPRequest) -> RTSPResponse, continuation: AsyncStream<RTSPRequest>.Continuation) {
            self.answer = answer
            self.continuation = continuation
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            reader.append(unwrapInboundIn(data).readableBytesView)
            while let message = try? reader.next() {
                guard case .request(let request) = message else { continue }
                continuation.yield(request)
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: answer(request).bytes)), promise: nil)
            }
        }
    }
}
