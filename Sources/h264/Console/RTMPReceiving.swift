import Foundation
import H264
import H264Streaming
import NIOPosix

extension ReceiveOptions {
    /// `h264 receive --listen rtmp://HOST:PORT/APP/KEY -o OUT.h264`: waits for one publisher
    /// (`RTMPIngestServer`, the URL's application and key only) and writes its stream as the
    /// RTP modes do: its frames become depacketizer events stamped with their presentation time
    /// on a 90 kHz clock, its damaged tags diagnostics.
    func receiveRTMP(listeningOn url: String, group: MultiThreadedEventLoopGroup) async throws {
        let target = try RTMPURL(url, allowingPortZero: true)
        guard !target.isSecure else { throw CLIError("--listen takes rtmp:// (rtmps:// is for publishing)") }
        let server: RTMPIngestServer
        do {
            server = try await RTMPIngestServer.start(host: target.host, port: target.port, group: group, app: target.app,
                                                      streamKey: target.streamKey,
                                                      logger: StandardErrorLogHandler.logger(command: "receive", quiet: quiet))
        } catch {
            throw CLIError("cannot listen for RTMP on \(target.host):\(target.port): \(error)")
        }
        let listening = server.url(host: target.host, app: target.app, streamKey: target.streamKey)
        FileHandle.standardError.write(Data("h264 receive: listening on \(listening)\n".utf8))
        try EventLog(path: events).write(.listening(url: listening))
        try await closing(server.shutdown) {
            var publishers = server.publishers.makeAsyncIterator()
            guard let publisher = try await StopSignal.catching(onStop: server.shutdown, { await publishers.next() }) else { return }
            let events = publisher.compactMap { (event: FLVReader.Event) -> RTPDepacketizer.Event? in
                switch event {
                case .frame(let frame):
                    .accessUnit(RTPReceivedAccessUnit(accessUnit: frame.accessUnit, timestamp: UInt32(truncatingIfNeeded: frame.presentationTime * 90),
                                                      endedByMarker: true))
                case .skippedTag(let error), .warning(let error): .diagnostic(error)
                case .sequenceHeader, .endOfSequence: nil
                }
            }
            try await receive(events, format: nil, opening: "publisher \(publisher.remoteAddress.map { "\($0)" } ?? "?") on \(listening)",
                              stop: server.shutdown, whenDone: publisher.stop) {
                publisher.droppedEvents > 0 ? "\(publisher.droppedEvents) events dropped (the output could not keep up)" : nil
            } statistics: { RTPReceptionStatistics() }
        }
    }
}
