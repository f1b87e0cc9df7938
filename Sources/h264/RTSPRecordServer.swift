import Foundation
import H264
import NIOCore
import NIOPosix

/// The listener of `h264 receive --listen rtsp://HOST:PORT/PATH`: an RTSP server (RFC 2326
/// record mode) that takes one stream published with ANNOUNCE and RECORD and writes it as
/// Annex-B, as `h264 receive rtsp://…` writes what it plays.
///
/// Every connection gets an `RTSPRecordHandler`; they share one `RTSPRecording` (the publishing
/// slot and the output). The listener, its connections and their UDP sockets run on one event
/// loop thread, so the recording needs no lock; the calling thread waits for it to end.
enum RTSPRecordServer {
    /// Listens on `url` (port 0: a free one), prints `h264 receive: listening on rtsp://HOST:PORT/PATH`
    /// on standard error (always: scripts and tests read the port from it), and returns once
    /// the recording `command` describes has ended; everything is closed then.
    ///
    /// - Throws: `CLIError` for a URL that is not `rtsp://HOST[:PORT][/PATH]` or an address
    ///   that cannot be bound; the output's error when it cannot be opened or written.
    static func record(url: String, command: ReceiveCommand) throws {
        let (host, port) = try RTSPClient.hostAndPort(of: url, allowingPortZero: true)
        let afterAuthority = url.dropFirst("rtsp://".count).drop { $0 != "/" }
        let pathPart = String(afterAuthority.prefix { $0 != "?" })
        let path = pathPart.isEmpty ? "/" : pathPart

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let listening = loop.flatSubmit { () -> EventLoopFuture<(any Channel, EventLoopFuture<Void>)> in
            let recording = NIOLoopBound(RTSPRecording(command: command, loop: loop), eventLoop: loop)
            loop.scheduleRepeatedTask(initialDelay: .milliseconds(200), delay: .milliseconds(200)) { _ in recording.value.check() }
            return ServerBootstrap(group: loop)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(RTSPRecordHandler(recording: recording.value, path: path))
                    }
                }
                .bind(host: host, port: port)
                .map { ($0, recording.value.ended.futureResult) }
        }
        let (channel, ended): (any Channel, EventLoopFuture<Void>)
        do {
            (channel, ended) = try listening.wait()
        } catch {
            throw CLIError("cannot listen for RTSP on \(host):\(port): \(error)")
        }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        FileHandle.standardError.write(Data("h264 receive: listening on rtsp://\(shownHost):\(channel.localAddress?.port ?? port)\(path)\n".utf8))
        defer { try? channel.close().wait() }
        try ended.wait()
    }
}
