import ArgumentParser
import Foundation
import H264
import H264Streaming
import HEVC

/// What `h264 receive` writes and when it stops, in every mode (RTP, RTSP, `--listen`).
struct ReceiveOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "The output file ('-' for standard output): Annex-B; both tracks as MP4 (.mp4: playable up to the last GOP after a crash) or FLV (.flv); decoded y4m (.y4m or --decode). Optional with --hls (then the stream is only served).")
    var output: String?
    @Option(help: "Stop after writing this many access units (decoded frames when decoding).") var frames: Int?
    @Option(help: "With -o PATTERN.mp4: a new file at the first keyframe after this many seconds (and at a format change); PATTERN numbers the files (%0Nd: rec-%03d.mp4) or dates them (strftime: rec-%Y%m%d-%H%M%S.mp4), or both.")
    var segmentDuration: Double?
    @Option(help: ArgumentHelp(RecordOptions.vodPlaylistHelp)) var vodPlaylist: String?
    @Option(help: "Stop when no packet has arrived for this many seconds (with --reconnect: reconnect).") var idleTimeout: Double = 10
    @Option(help: "How many later packets may wait for a missing one before it counts as lost.") var reorderWindow: Int = 16
    @Flag(help: "Listen on the rtsp:// URL (port 0: a free one) for one publisher that sends RTSP ANNOUNCE and RECORD (ffmpeg -f rtsp, GStreamer rtspclientsink), or on the rtmp:// URL for one RTMP publisher, instead of connecting to a server.")
    var listen = false
    @Option(help: "Write the listening address and (with --listen) the RTSP sessions as JSON lines to this file ('-': standard output); with an rtsp:// URL: playing, and with --reconnect disconnected, reconnected and resumed (the gap in seconds).")
    var events: String?
    @Flag(help: "No log lines for losses and damaged packets, and no summary.") var quiet = false
    @Flag(help: "Decode and write y4m to -o (implied when -o ends in .y4m).") var decode = false
    @Option(help: "Also decode into this y4m file ('-' for standard output); -o stays Annex-B.") var decoded: String?

    /// True when -o gets the decoded y4m instead of Annex-B.
    var decodesOutput: Bool { decode || output?.lowercased().hasSuffix(".y4m") == true }

    func validate() throws {
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be positive") }
        guard (0...1024).contains(reorderWindow) else { throw ValidationError("--reorder-window must be 0…1024") }
        if decode && output == nil { throw ValidationError("--decode writes y4m to -o: give -o FILE.y4m (or --decoded FILE.y4m)") }
        if let output, decoded != nil && decodesOutput {
            throw ValidationError("--decoded writes y4m beside the Annex-B of -o; -o \(output)\(decode ? " --decode" : "") is y4m already")
        }
        if let decoded, decoded == output { throw ValidationError("--decoded and -o name the same file") }
        try RecordOptions.validate(segmentDuration: segmentDuration, output: output)
        try RecordOptions.validate(vodPlaylist: vodPlaylist, output: output)
        if let events, events == "-" && (output == "-" || decoded == "-") { throw ValidationError("--events - and the stream both on standard output") }
    }

    /// Writes `h264 receive: LINE` on standard error, unless `--quiet`.
    func log(_ line: String) { if !quiet { FileHandle.standardError.write(Data("h264 receive: \(line)\n".utf8)) } }

    /// The output: Annex-B to -o, decoded y4m to -o (``decodesOutput``) or --decoded, or both;
    /// every frame also appended to `hls` (`--hls`).
    func receivedOutput(format: VideoFormatDescription?, hls: HLSLiveStream?) throws -> ReceivedOutput {
        let y4m = decodesOutput ? output : decoded
        return try ReceivedOutput(path: decodesOutput ? nil : output, format: format, frames: frames, decodedPath: y4m,
                                  segmentDuration: segmentDuration.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) },
                                  vodPlaylist: vodPlaylist, hls: hls, log: log)
    }
}
