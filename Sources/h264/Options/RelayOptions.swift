import ArgumentParser
import H264Streaming

/// Where `h264 relay` serves its source (`--rtsp`, `--port`) and how it plays a file (`--loop`,
/// `--fps`) or takes a publisher (`--listen`).
struct RelayOptions: ParsableArguments {
    @Option(help: "Serve the stream over RTSP at rtsp://HOST:PORT/PATH (PATH default /live; port 0: any free port, printed).")
    var rtsp: String?
    @Option(help: "Also serve it as raw Annex-B over TCP on this port (0: any free port), as h264 serve --port does.") var port: Int?
    @Option(help: "Address the --port fan-out listens on.") var host = "127.0.0.1"
    @Option(help: "Take the stream from one publisher pushing to this rtsp:// URL (ffmpeg -f rtsp, rtspclientsink) instead of SOURCE.")
    var listen: String?
    @Flag(help: "With a file: start it again when it ends, forever (without it the relay ends after the last frame).") var loop = false
    @Option(help: "With a file whose SPS has no timing: its frame rate (default 30).") var fps: Double?
    @Option(help: "The most bytes of the current GOP kept for joining viewers (past it they wait for the next IDR).")
    var gopBytes = GOPKeeping.standard.byteLimit
    @Option(help: "The most frames of the current GOP kept for joining viewers.") var gopFrames = GOPKeeping.standard.frameLimit
    @Option(help: "Write the listening addresses, viewers and RTSP sessions as JSON lines to this file ('-': standard output).")
    var events: String?
    @Flag(help: "No log lines for viewers and no summary.") var quiet = false

    func validate() throws {
        if let port, !(0...65_535).contains(port) { throw ValidationError("--port must be 0…65535") }
        if let fps, !(fps > 0 && fps <= 1000) { throw ValidationError("--fps must be above 0 and at most 1000") }
        guard gopBytes > 0, gopFrames > 0 else { throw ValidationError("--gop-bytes and --gop-frames must be positive") }
    }

    /// `--rtsp HOST:PORT[/PATH]` as host, port and mount path; nil without `--rtsp`.
    func rtspAddress() throws -> (host: String, port: Int, path: String)? {
        try rtsp.map { try Self.listenAddress($0, option: "--rtsp") }
    }

    /// `HOST:PORT[/PATH]` (`[::1]:PORT` for IPv6, port 0: any free one) as host, port and mount
    /// path (default `/live`): the address of `--rtsp` and `--hls`.
    static func listenAddress(_ text: String, option: String) throws -> (host: String, port: Int, path: String) {
        let slash = text.firstIndex(of: "/") ?? text.endIndex
        let authority = String(text[..<slash]), path = text[slash...].isEmpty ? "/live" : String(text[slash...])
        guard authority.contains(":"), let (host, port) = try? RTSPURI.hostAndPort(of: "rtsp://" + authority, allowingPortZero: true) else {
            throw CLIError("\(option) wants HOST:PORT[/PATH], not \(text)")
        }
        return (host, port, path)
    }
}
