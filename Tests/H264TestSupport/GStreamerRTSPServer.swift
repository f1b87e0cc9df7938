import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Scripts/gst-rtsp-server.py run with /usr/bin/python3 (which has `gi`), with the script's
/// options (`--auth digest`, `--session-timeout 8`, `--protocols udp` …): returns once the script
/// has printed the URL it serves on its standard output.
public final class GStreamerRTSPServer: Sendable {
    /// `rtsp://127.0.0.1:PORT/test` (`rtsps://` with `--tls-certificate`).
    public let url: String
    private let process: Process
    /// The script's process id (for its CPU time in `/proc`).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Starts the script with `arguments`.
    public init(_ arguments: [String] = []) throws {
        (process, url) = try ScriptServer.launch("gst-rtsp-server.py", arguments, urlPattern: #"rtsps?://127\.0\.0\.1:[0-9]+/test"#)
    }

    /// Ends the script and waits for it. SIGKILL: the test process's blocked signals are
    /// inherited, so the script's SIGTERM handler may never run.
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
