import ArgumentParser
import H264Streaming
import Logging
import NIOCore

/// `--rtmp URL` (repeatable; `--rtmp-enhanced`): where `h264 relay` and `h264 serve` publish
/// over RTMP, each publisher a sink of the stream's `Broadcaster`.
struct RTMPOutputOptions: ParsableArguments {
    @Option(help: "Also publish the stream to this rtmp://HOST[:PORT]/APP/KEY (or rtmps://) URL, as an RTMP encoder does (nginx-rtmp, SRS, YouTube, Twitch); repeat it to publish to several at once.")
    var rtmp: [String] = []
    @Flag(help: "With --rtmp: Enhanced RTMP video tags (FourCC avc1) instead of the legacy FLV AVC tags every server reads.")
    var rtmpEnhanced = false

    func validate() throws {
        for url in rtmp {
            do { _ = try RTMPURL(url) } catch { throw ValidationError("--rtmp: \(error)") }
        }
    }

    /// The publishers of `--rtmp` (each publishing again after a drop by the `reconnect` policy), connected and publishing; none without it.
    func publishers(group: any EventLoopGroup, reconnect: RTMPPublisher.Configuration.Reconnect?, logger: Logger) async throws -> [RTMPPublisher] {
        var configuration = RTMPPublisher.Configuration()
        (configuration.syntax, configuration.reconnect) = (rtmpEnhanced ? .enhanced : .legacy, reconnect)
        var publishers: [RTMPPublisher] = []
        for url in rtmp {
            do {
                publishers.append(try await RTMPPublisher.connect(to: url, group: group, configuration: configuration, logger: logger))
            } catch {
                for publisher in publishers { await publisher.finish() }
                throw CLIError("--rtmp \(url): \(error)")
            }
        }
        return publishers
    }
}
