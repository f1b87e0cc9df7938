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
        guard let rtmp else { return }
        do { _ = try RTMPURL(rtmp) } catch { throw ValidationError("--rtmp: \(error)") }
    }

    /// The publisher of `--rtmp`, connected and publishing; nil without it.
    func publisher(group: any EventLoopGroup, logger: Logger) async throws -> RTMPPublisher? {
        guard let rtmp else { return nil }
        var configuration = RTMPPublisher.Configuration()
        configuration.syntax = rtmpEnhanced ? .enhanced : .legacy
        do {
            return try await RTMPPublisher.connect(to: rtmp, group: group, configuration: configuration, logger: logger)
        } catch {
            throw CLIError("--rtmp: \(error)")
        }
    }

    /// `published N frames to URL (M dropped …)`, for the summary line.
    static func summary(_ publisher: RTMPPublisher) -> String {
        let stats = publisher.statistics
        return "published \(stats.framesSent) frames to \(publisher.url) (\(stats.framesDropped) dropped, \(stats.skipsToKeyframe) skips to an IDR)"
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
