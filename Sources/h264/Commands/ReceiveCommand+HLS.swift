import H264Streaming
import NIOPosix

extension ReceiveCommand {
    /// Runs `body` (every mode) with the `--events` log and, with `--hls`, the started HLS
    /// server's stream (`HLSOutput`: its playlist URL said and written as a `listening` event),
    /// which every received frame is appended to; at the end the stream is finished and the
    /// server shut down.
    func serving(group: MultiThreadedEventLoopGroup,
                 _ body: (_ eventLog: EventLog, _ hls: HLSLiveStream?) async throws -> Void) async throws {
        let eventLog = try EventLog(path: options.events)
        let served = try await HLSOutput.start(hls, group: group, eventLog: eventLog, command: "receive")
        try await closing({ await served?.finish() }) {
            try await body(eventLog, served?.stream)
        }
    }
}
