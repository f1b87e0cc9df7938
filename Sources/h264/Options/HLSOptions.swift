import ArgumentParser
import MediaContainers

/// `--hls HOST:PORT[/PATH]`, `--hls-segment-duration` and `--hls-part-duration` of `serve`,
/// `relay` and `receive`: the stream served as HLS and Low-Latency HLS (H264Streaming's
/// `HLSServer`; fed by an `HLSSink` on the broadcaster, or by `receive`'s `ReceivedOutput`).
struct HLSOptions: ParsableArguments {
    @Option(help: "Also serve the stream as HLS / Low-Latency HLS at http://HOST:PORT/PATH/index.m3u8 (PATH default /live; port 0: any free port, printed).")
    var hls: String?
    @Option(help: "With --hls: a segment's target duration in seconds (it ends at the first keyframe past it).")
    var hlsSegmentDuration: Double = 2
    @Option(help: "With --hls: the longest LL-HLS part in seconds (0: plain HLS, no parts).")
    var hlsPartDuration: Double = 0.2

    func validate() throws {
        guard hlsSegmentDuration.isFinite, hlsSegmentDuration >= 0.5, hlsSegmentDuration <= 60 else {
            throw ValidationError("--hls-segment-duration must be 0.5…60 seconds")
        }
        guard hlsPartDuration.isFinite, hlsPartDuration == 0 || (0.05...hlsSegmentDuration).contains(hlsPartDuration) else {
            throw ValidationError("--hls-part-duration must be 0 (no parts) or 0.05 s … the segment duration")
        }
        _ = try address()
    }

    /// `--hls HOST:PORT[/PATH]` as host, port and mount path; nil without `--hls`.
    func address() throws -> (host: String, port: Int, path: String)? {
        try hls.map { try RelayOptions.listenAddress($0, option: "--hls") }
    }

    /// The packager's segment and part durations.
    var configuration: HLSPackager.Configuration {
        HLSPackager.Configuration(segmentDuration: .seconds(hlsSegmentDuration),
                                  partDuration: hlsPartDuration > 0 ? .seconds(hlsPartDuration) : nil)
    }
}
