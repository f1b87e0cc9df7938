import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Scripts/quirky-camera.py run with /usr/bin/python3: a camera of our own that serves an Annex-B
/// file over RTSP (UDP or TCP interleaved) with the quirks real cameras have, one or several
/// (`all`) switched on; returns once the script has printed the URL it serves.
public final class QuirkyCamera: Sendable {
    /// `rtsp://127.0.0.1:PORT/stream`.
    public let url: String
    private let process: Process

    /// Serves `file` (a path) with `quirks` (the script's names), sending `rate` access units a
    /// second of wall clock (their RTP timestamps at 30 fps).
    public init(file: String, quirks: [String], rate: Int = 120) throws {
        let arguments = [file, "--rate", String(rate)] + quirks.flatMap { ["--quirk", $0] }
        (process, url) = try ScriptServer.launch("quirky-camera.py", arguments, urlPattern: #"rtsp://127\.0\.0\.1:[0-9]+/stream"#)
    }

    /// Ends the script and waits for it (SIGKILL, as ``GStreamerRTSPServer/kill()``).
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
