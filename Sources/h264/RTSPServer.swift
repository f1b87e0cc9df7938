import Foundation
import H264
import NIOCore
import NIOPosix

/// The RTSP server of `h264 serve --rtsp HOST:PORT` (RFC 2326): the live stream at
/// `rtsp://HOST:PORT/live`, one RTP stream (RFC 6184, packetization-mode 1) interleaved in each
/// viewer's RTSP connection (`RTP/AVP/TCP`).
///
/// Viewers are clients of the same `Broadcaster` as the raw-TCP ones: PLAY joins it (so the
/// viewer gets SPS, PPS and an IDR forced for it at once), PAUSE, TEARDOWN or a closed
/// connection leaves it, and a viewer that stops reading is skipped to the next IDR without
/// slowing the others. Each viewer's connection packetizes the Annex-B frames it is given
/// (`RTSPConnectionHandler`), with its own SSRC and sequence numbers.
///
/// The request parsing and response writing are the library's (`RTSPMessageReader`,
/// `RTSPResponse`, `RTSPTransport`: pure Swift, so the fuzz target reaches them); this file
/// only binds them to SwiftNIO.
final class RTSPServer: Sendable {
    /// Why the server could not start.
    struct StartError: Error, CustomStringConvertible {
        /// What went wrong.
        var description: String
    }

    /// The listening channel.
    let channel: any Channel
    /// `rtsp://HOST:PORT/live`, with the port bound.
    let url: String
    /// The open RTSP connections, by channel.
    private let connections: Locked<[ObjectIdentifier: any Channel]>

    private init(channel: any Channel, url: String, connections: Locked<[ObjectIdentifier: any Channel]>) {
        self.channel = channel
        self.url = url
        self.connections = connections
    }

    /// Starts listening on `address` when it is given (`HOST:PORT`; port 0 takes a free one, `[::1]:PORT` for
    /// IPv6) and prints `h264 serve: listening on rtsp://HOST:PORT/live` on standard error
    /// (always: scripts and tests read the port from it).
    static func start(ifRequested address: String?, group: any EventLoopGroup, broadcaster: Broadcaster, format: FormatDescription,
                      sendBufferSize: Int? = nil, log: @escaping @Sendable (String) -> Void) async throws -> RTSPServer? {
        guard let address else { return nil }
        return try await start(address: address, group: group, broadcaster: broadcaster, format: format,
                               configuration: .init(sendBufferSize: sendBufferSize), log: log)
    }

    /// Starts listening on `address`; see ``start(ifRequested:group:broadcaster:format:sendBufferSize:log:)``.
    static func start(address: String, group: any EventLoopGroup, broadcaster: Broadcaster, format: FormatDescription,
                      configuration: RTSPConnectionHandler.Configuration = .init(),
                      log: @escaping @Sendable (String) -> Void) async throws -> RTSPServer {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
              (0...65_535).contains(port) else {
            throw StartError(description: "--rtsp wants HOST:PORT, not \(address)")
        }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        let registry = Locked([ObjectIdentifier: any Channel]())
        let channel: any Channel
        do {
            var bootstrap = ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            if let size = configuration.sendBufferSize {
                bootstrap = bootstrap.childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(size))
            }
            channel = try await bootstrap
                .childChannelInitializer { channel in
                    let key = ObjectIdentifier(channel)
                    registry.withLock { $0[key] = channel }
                    channel.closeFuture.whenComplete { _ in _ = registry.withLock { $0.removeValue(forKey: key) } }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            RTSPConnectionHandler(broadcaster: broadcaster, format: format, configuration: configuration, log: log))
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            throw StartError(description: "cannot listen for RTSP on \(address): \(error)")
        }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let server = RTSPServer(channel: channel, url: "rtsp://\(shownHost):\(channel.localAddress?.port ?? port)/live",
                                connections: registry)
        FileHandle.standardError.write(Data("h264 serve: listening on \(server.url)\n".utf8))
        return server
    }

    /// Stops listening and closes every RTSP connection (their sessions end).
    func close() async {
        try? await channel.close()
        let open = connections.withLock { Array($0.values) }
        for channel in open { try? await channel.close() }
    }
}
