import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import RTSPMessages

/// An `RTSPClientHandler` on a connected `EmbeddedChannel`: the test reads the requests it
/// writes, answers them, and moves the loop's clock.
final class EmbeddedRTSPClient {
    let channel = EmbeddedChannel()
    let handler: RTSPClientHandler
    let state = Locked(RTSPClient.State())
    private var reader = RTSPMessageReader()

    let events: AsyncStream<RTSPClient.Event>

    init(credentials: RTSPCredentials? = nil) throws {
        let continuation = FrameEventQueue<RTSPClient.Event, Never>(limit: RTSPClient.bufferLimit, keyframeFlag: \.keyframeFlag)
        self.events = continuation.stream
        handler = RTSPClientHandler(continuation: continuation, state: state, idleTimeout: nil, userAgent: "test",
                                    credentials: credentials, logger: .streamingSilent) { [state] ending in
            state.withLock { $0.ending = $0.ending ?? ending }
            continuation.finish()
        }
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 554)).wait()
    }

    var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

    /// `method` on `uri` through the handler (authentication and retries included).
    func request(_ method: String, _ uri: String, headers: [(name: String, value: String)] = []) -> EventLoopFuture<RTSPResponse> {
        handler.request(method, uri: uri, headers: headers, timeout: .seconds(10), on: loop)
    }

    /// The requests written since the last call.
    func sent() throws -> [RTSPRequest] {
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { reader.append(buffer.readableBytesView) }
        var requests: [RTSPRequest] = []
        while let message = try reader.next() { if case .request(let request) = message { requests.append(request) } }
        return requests
    }

    /// Answers `request` with `status` and `headers`.
    func answer(_ request: RTSPRequest, _ status: RTSPStatus, headers: [(name: String, value: String)] = []) throws {
        try channel.writeInbound(ByteBuffer(bytes: RTSPResponse(status: status, cSeq: request.cSeq, headers: headers).bytes))
    }

    var ending: RTSPClient.Ending? { state.withLock { $0.ending } }
}

extension RTSPStatus {
    static let unauthorized = RTSPStatus(code: 401, reasonPhrase: "Unauthorized")
}
