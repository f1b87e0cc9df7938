import H264TestSupport
import MediaCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 client of the HLS tests on NIOHTTP1, over one keep-alive connection to
/// 127.0.0.1: ``send(_:_:headers:)`` writes a request, ``response()`` awaits the next whole
/// response, and ``received`` tells — without waiting — how many have come, so a test can see
/// that a held request has not been answered yet.
final class HTTPTestClient {
    /// One whole response.
    struct Response: Sendable {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    private let channel: any Channel
    private let counted: Locked<Int>
    private var iterator: AsyncStream<Response>.Iterator

    private init(channel: any Channel, responses: AsyncStream<Response>, counted: Locked<Int>) {
        self.channel = channel
        self.counted = counted
        iterator = responses.makeAsyncIterator()
    }

    /// How many whole responses have arrived.
    var received: Int { counted.withLock { $0 } }

    /// Connects to 127.0.0.1:`port`.
    static func connect(port: Int, group: any EventLoopGroup) async throws -> HTTPTestClient {
        let (responses, continuation) = AsyncStream.makeStream(of: Response.self)
        let counted = Locked(0)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(Collector(continuation: continuation, counted: counted))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return HTTPTestClient(channel: channel, responses: responses, counted: counted)
    }

    /// Writes a request for `uri` (no body) with `headers` besides `Host`.
    func send(_ method: HTTPMethod = .GET, _ uri: String, headers: [(String, String)] = []) {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: uri)
        head.headers.add(name: "Host", value: "127.0.0.1")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    /// Writes the head of a GET for `uri` and never its end (a slow client).
    func sendHeadOnly(_ uri: String) {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri)
        head.headers.add(name: "Host", value: "127.0.0.1")
        head.headers.add(name: "Content-Length", value: "10")
        channel.writeAndFlush(HTTPClientRequestPart.head(head), promise: nil)
    }

    /// Writes a POST-like GET for `uri` with a body of `bytes` zeros (for the server's body limit).
    func sendWithBody(_ uri: String, bytes: Int) {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri)
        head.headers.add(name: "Host", value: "127.0.0.1")
        head.headers.add(name: "Content-Length", value: String(bytes))
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(repeating: 0, count: bytes))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    /// The next response; nil once the server has closed the connection.
    func response() async -> Response? {
        await iterator.next()
    }

    /// Sends a request and awaits its response.
    func get(_ uri: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> Response {
        send(method, uri, headers: headers)
        guard let answer = await response() else { throw LoopbackError("the server closed the connection") }
        return answer
    }

    /// Hangs up.
    func close() async {
        try? await channel.close()
    }

    /// Gathers the response parts into whole responses.
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        let continuation: AsyncStream<Response>.Continuation
        let counted: Locked<Int>
        var building: Response?

        init(continuation: AsyncStream<Response>.Continuation, counted: Locked<Int>) {
            (self.continuation, self.counted) = (continuation, counted)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): building = Response(status: head.status, headers: head.headers, body: [])
            case .body(let buffer): building?.body += buffer.readableBytesView
            case .end:
                if let building { counted.withLock { $0 += 1 }; continuation.yield(building) }
                building = nil
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
