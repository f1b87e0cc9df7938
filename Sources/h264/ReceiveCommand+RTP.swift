import H264
import H264Streaming
import NIOPosix

extension ReceiveCommand {
    /// `h264 receive STREAM.sdp -o OUT.h264`: plain RTP on the SDP's UDP port (`RTPReceiver`),
    /// until `--frames`, `--idle-timeout` seconds without a packet, or SIGINT/SIGTERM.
    func receiveRTP() async throws {
        let text = String(decoding: try CLIIO.read(sdp), as: UTF8.self)
        let description = try SessionDescription(parsing: text)
        let format = try depacketizer(for: description).1
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let receiver: RTPReceiver
        do {
            receiver = try await RTPReceiver.start(description: description, group: group, reorderWindow: reorderWindow,
                                                   idleTimeout: .seconds(idleTimeout))
        } catch let error as H264Error {
            try? await group.shutdownGracefully()
            throw error
        } catch {
            try? await group.shutdownGracefully()
            throw CLIError("cannot listen on UDP port \(description.port) (\(error))")
        }
        var outcome: Result<Void, any Error> = .success(())
        do {
            let sink = try receivedOutput(format: format)
            log("listening on udp port \(description.port)")
            try await write(receiver, to: sink)
        } catch {
            outcome = .failure(error)
        }
        await receiver.shutdown()
        try? await group.shutdownGracefully()
        try outcome.get()
    }

    /// Writes the receiver's events to `sink` until it is done, the receiver ends, or a stop signal.
    private func write(_ receiver: RTPReceiver, to sink: ReceivedAnnexBOutput) async throws {
        try await StopSignal.catching(onStop: { await receiver.shutdown() }) {
            for await event in receiver {
                try sink.write(event)
                if sink.done { break }
            }
        }
        if receiver.ending == .idle { log("no packet for \(idleTimeout) s") }
        let statistics = receiver.statistics
        try sink.finish(packets: statistics.packets, lost: statistics.lostPackets, dropped: statistics.droppedAccessUnits)
    }
}
