import Foundation
import H264
import H264Streaming
import NIOPosix
import MediaContainers

extension ReceiveOptions {
    /// `h264 receive --listen rtmp://HOST:PORT/APP/KEY -o OUT.h264`: waits for one publisher
    /// (`RTMPIngestServer`, the URL's application and key only) and writes its stream.
    func receiveRTMP(listeningOn url: String, eventLog: EventLog, hls: HLSLiveStream?, group: MultiThreadedEventLoopGroup) async throws {
        let (server, listening) = try await startRTMPIngest(url, group: group,
                                                            logger: StandardErrorLogHandler.logger(command: "receive", quiet: quiet))
        FileHandle.standardError.write(Data("h264 receive: listening on \(listening)\n".utf8))
        eventLog.write(.listening(url: listening))
        try await closing(server.shutdown) {
            guard let publisher = try await server.firstPublisher() else { return }
            try await receive(publisher, hls: hls, opening: "publisher \(publisher.remoteAddress.map { "\($0)" } ?? "?") on \(listening)",
                              stop: server.shutdown, whenDone: publisher.stop) { publisher.droppedEvents }
        }
    }

    /// `h264 receive rtmp[s]://HOST[:PORT]/APP/KEY -o OUT.h264`: plays the stream (`RTMPPlayer`) until its publisher stops.
    func receiveRTMP(playing url: String, tlsTrust: RTSPTLSTrust, eventLog: EventLog, hls: HLSLiveStream?,
                     group: MultiThreadedEventLoopGroup) async throws {
        let player = try await RTMPPlayer.connect(to: url, group: group, configuration: RTMPPlayer.Configuration(tlsTrust: tlsTrust),
                                                  logger: StandardErrorLogHandler.logger(command: "receive", quiet: quiet))
        eventLog.write(.playing(url: player.url.description, session: "message stream \(player.messageStreamId)"))
        try await receive(player, hls: hls, opening: "playing \(player.url)", stop: { player.stop() }, whenDone: player.stop) { player.droppedEvents }
        if case .failed(let error)? = player.ending { throw error }
    }

    /// Writes an RTMP stream's events as the RTP modes write theirs (`ReceivedOutput.write(flv:)`).
    private func receive(_ flv: some AsyncSequence<FLVReader.Event, Never> & Sendable, hls: HLSLiveStream?, opening: String,
                         stop: @escaping @Sendable () async -> Void, whenDone: () -> Void, dropped: () -> Int) async throws {
        try await receive(flv, format: nil, hls: hls, opening: opening, stop: stop, whenDone: whenDone) {
            dropped() > 0 ? "\(dropped()) events dropped (the output could not keep up)" : nil
        }
    }
}
