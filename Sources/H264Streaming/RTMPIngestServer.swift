import H264
public import Logging
public import NIOCore
import NIOPosix

/// Accepts RTMP publishers — OBS, `ffmpeg -c copy -f flv rtmp://HOST:PORT/APP/KEY`, GStreamer's
/// `rtmp2sink` — on `rtmp://HOST:PORT/APP/KEY`: the server side of the handshake, `connect`,
/// `createStream` and `publish` answered as nginx-rtmp answers them, and each publisher that
/// starts publishing out of ``publishers`` as an ``RTMPIncomingStream`` of its video and audio.
///
/// ```swift
/// let server = try await RTMPIngestServer.start(host: "127.0.0.1", port: 1935, group: group)
/// for await publisher in server.publishers {
///     for await event in publisher { … }            // FLVReader events: format, frames …
/// }
/// ```
///
/// One publisher at a time: a `publish` while another is live gets `onStatus`
/// `NetStream.Publish.BadName` (level error), as does one to another application or stream key
/// than the server's, when it has them.
public final class RTMPIngestServer: Sendable {
    /// The publishers, each as it starts publishing; ends at ``shutdown()``.
    public let publishers: AsyncStream<RTMPIncomingStream>
    private let channel: any Channel
    private let state: Locked<RTMPIngestHandler.Shared>
    private let continuation: AsyncStream<RTMPIncomingStream>.Continuation

    private init(channel: any Channel, state: Locked<RTMPIngestHandler.Shared>, publishers: AsyncStream<RTMPIncomingStream>,
                 continuation: AsyncStream<RTMPIncomingStream>.Continuation) {
        self.channel = channel
        self.state = state
        self.publishers = publishers
        self.continuation = continuation
    }

    /// The address the server listens on (with the port the system chose for port 0).
    public var localAddress: SocketAddress? { channel.localAddress }

    /// `rtmp://HOST:PORT/APP/KEY` with the bound port.
    ///
    /// - Parameters:
    ///   - host: the host name or address publishers connect to.
    ///   - app: the application.
    ///   - streamKey: the stream key.
    public func url(host: String, app: String, streamKey: String) -> String {
        "rtmp://\(host.contains(":") ? "[\(host)]" : host):\(localAddress?.port ?? 0)/\(app)/\(streamKey)"
    }

    /// Starts listening on `host`:`port` (0: a free port).
    ///
    /// - Parameters:
    ///   - host: the address to listen on.
    ///   - port: the port; 0 takes a free one (``localAddress``).
    ///   - group: the event loop group of the server and its connections.
    ///   - app: the only application accepted (`connect` to another is refused); nil: any.
    ///   - streamKey: the only stream key accepted; nil: any.
    ///   - logger: connections, publishes and refusals.
    /// - Throws: the error of binding the address.
    public static func start(host: String, port: Int, group: any EventLoopGroup, app: String? = nil, streamKey: String? = nil,
                             logger: Logger = .streamingSilent) async throws -> RTMPIngestServer {
        let (publishers, continuation) = AsyncStream.makeStream(of: RTMPIncomingStream.self)
        let state = Locked(RTMPIngestHandler.Shared())
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    let handler = RTMPIngestHandler(app: app, streamKey: streamKey, shared: state, logger: logger) { stream in
                        continuation.yield(stream)
                    }
                    try child.pipeline.syncOperations.addHandler(handler)
                }
            }
            .bind(host: host, port: port).get()
        return RTMPIngestServer(channel: channel, state: state, publishers: publishers, continuation: continuation)
    }

    /// Stops listening, ends every publish (``RTMPIncomingStream/Ending/stopped``) and ends
    /// ``publishers``.
    public func shutdown() async {
        try? await channel.close()
        let live = state.withLock { shared in
            shared.closed = true
            return shared.live
        }
        live?.stop()
        continuation.finish()
    }
}
