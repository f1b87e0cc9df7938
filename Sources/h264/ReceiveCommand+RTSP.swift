import H264
import H264Streaming
import NIOPosix

extension ReceiveCommand {
    /// `h264 receive rtsp://…`: plays the URL with `RTSPClient` (RTP/AVP/TCP interleaved, or
    /// RTP/AVP over UDP with `--transport udp`) until `--frames`, `--idle-timeout` seconds
    /// without a packet, the server closing the connection, or SIGINT/SIGTERM; then TEARDOWN.
    func receiveRTSP() async throws {
        var configuration = RTSPClient.Configuration()
        configuration.transport = transport == .udp ? .udp : .tcp
        configuration.idleTimeout = .seconds(idleTimeout)
        configuration.reorderWindow = reorderWindow
        configuration.userAgent = "h264 receive"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client: RTSPClient
        do {
            client = try await RTSPClient.open(url: sdp, group: group, configuration: configuration,
                                               logger: StandardErrorLogHandler.logger(command: "receive", quiet: quiet))
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        var outcome: Result<Void, any Error> = .success(())
        do {
            let sink = try receivedOutput(format: client.formatDescription)
            log("playing \(sdp) (session \(client.session), RTP " + (client.udpPort.map { "on udp port \($0)" }
                ?? "on interleaved channel \(client.transport.interleavedChannels?.lowerBound ?? 0)") + ")")
            try await write(client, to: sink)
        } catch {
            outcome = .failure(error)
        }
        await client.close()
        try? await group.shutdownGracefully()
        try outcome.get()
    }

    /// Writes the client's events to `sink` until it is done, the events end, or a stop signal.
    private func write(_ client: RTSPClient, to sink: ReceivedAnnexBOutput) async throws {
        try await StopSignal.catching(onStop: { await client.close() }) {
            for await event in client {
                switch event {
                case .accessUnit(let unit, _): try sink.write(.accessUnit(unit))
                case .loss(let loss): try sink.write(.loss(loss))
                case .diagnostic(let error): try sink.write(.diagnostic(error))
                case .formatChange: break // The access unit carries its parameter sets.
                }
                if sink.done { break }
            }
        }
        switch client.ending {
        case .idle: log("no packet for \(idleTimeout) s")
        case .serverClosed: log("the server closed the connection")
        case .closed, nil: break
        }
        let statistics = client.statistics
        try sink.finish(packets: statistics.packets, lost: statistics.lostPackets, dropped: statistics.droppedAccessUnits)
    }
}
