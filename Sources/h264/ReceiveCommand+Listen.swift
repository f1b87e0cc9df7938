import Foundation
import H264
import H264Streaming
import NIOPosix

extension ReceiveCommand {
    /// `h264 receive --listen rtsp://HOST:PORT/PATH -o OUT.h264`: waits for one publisher
    /// (RTSP ANNOUNCE, SETUP with `mode=record`, RECORD; `RTSPRecordServer`) and writes its
    /// stream like the other modes. SIGINT/SIGTERM end it (exit status 0).
    func receiveListening() async throws {
        guard sdp.lowercased().hasPrefix("rtsp://") else {
            throw CLIError("--listen wants an rtsp:// URL to listen on, not \(sdp)")
        }
        let (host, port) = try RTSPURI.hostAndPort(of: sdp, allowingPortZero: true)
        let afterAuthority = sdp.dropFirst("rtsp://".count).drop { $0 != "/" }
        let pathPart = String(afterAuthority.prefix { $0 != "?" })
        var configuration = RTSPRecordServer.Configuration()
        configuration.idleTimeout = .seconds(idleTimeout)
        configuration.reorderWindow = reorderWindow
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server: RTSPRecordServer
        do {
            server = try await RTSPRecordServer.start(host: host, port: port, path: pathPart.isEmpty ? "/" : pathPart, group: group,
                                                      configuration: configuration,
                                                      logger: StandardErrorLogHandler.logger(command: "receive", quiet: quiet))
        } catch {
            try? await group.shutdownGracefully()
            throw CLIError("cannot listen for RTSP on \(host):\(port): \(error)")
        }
        // Always printed: scripts and tests read the port from it.
        FileHandle.standardError.write(Data("h264 receive: listening on \(server.url(host: host))\n".utf8))

        // SIGINT/SIGTERM shut the server down, which ends the recording (or the wait for one).
        var outcome: Result<Void, any Error> = .success(())
        do {
            try await StopSignal.catching(onStop: { await server.shutdown() }) {
                for await publisher in server.publishers {
                    try await record(publisher)
                    break
                }
            }
        } catch {
            outcome = .failure(error)
        }
        await server.shutdown()
        try? await group.shutdownGracefully()
        try outcome.get()
    }

    /// Writes what `publisher` sends until its recording ends or `--frames` are written.
    private func record(_ publisher: RTSPPublisher) async throws {
        let output = try receivedOutput(format: publisher.formatDescription)
        for await event in publisher {
            try output.write(event)
            if output.done {
                publisher.stop()
                break
            }
        }
        let statistics = publisher.statistics
        try output.finish(packets: statistics.packets, lost: statistics.lostPackets, dropped: statistics.droppedAccessUnits)
    }
}
