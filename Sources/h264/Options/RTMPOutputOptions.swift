import ArgumentParser
import H264Streaming
import Logging
import NIOCore

/// `--rtmp URL` (`--rtmp-enhanced`): where `h264 relay` and `h264 serve` publish over RTMP.
struct RTMPOutputOptions: ParsableArguments {
    @Option(help: "Also publish the stream to this rtmp://HOST[:PORT]/APP/KEY (or rtmps://) URL, as an RTMP encoder does (nginx-rtmp, SRS, YouTube, Twitch).")
    var rtmp: String?
    @Flag(help: "With --rtmp: Enhanced RTMP video tags (FourCC avc1) instead of the legacy FLV AVC tags every server reads.")
    var rtmpEnhanced = false

    func validate() throws {
        do { _ = try rtmp.map { try RTMPURL($0) } } catch { throw ValidationError("--rtmp: \(error)") }
    }

    /// The publisher of `--rtmp` (publishing again after a drop by the `reconnect` policy), connected and publishing; nil without it.
    func publisher(group: any EventLoopGroup, reconnect: RTMPPublisher.Configuration.Reconnect?, logger: Logger) async throws -> RTMPPublisher? {
        guard let rtmp else { return nil }
        var configuration = RTMPPublisher.Configuration()
        (configuration.syntax, configuration.reconnect) = (rtmpEnhanced ? .enhanced : .legacy, reconnect)
        do {
            return try await RTMPPublisher.connect(to: rtmp, group: group, configuration: configuration, logger: logger)
        } catch {
            throw CLIError("--rtmp: \(error)")
        }
    }
}

extension AsyncSequence where Element == LiveFrame {
    /// The frames, each sent to `publisher` (when there is one) before it is handed on.
    func publishing(to publisher: RTMPPublisher?) -> AsyncThrowingMapSequence<Self, LiveFrame> {
        map { frame in
            try await publisher?.send(frame)
            return frame
        }
    }
}
