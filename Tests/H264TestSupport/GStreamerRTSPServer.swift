import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Scripts/gst-rtsp-server.py run with /usr/bin/python3 (which has `gi`), with the script's
/// options (`--auth digest`, `--session-timeout 8`, `--protocols udp` …): returns once the script
/// has printed the URL it serves on its standard output.
public final class GStreamerRTSPServer: Sendable {
    /// `rtsp://127.0.0.1:PORT/test`.
    public let url: String
    private let process: Process
    /// The script's process id (for its CPU time in `/proc`).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Starts the script with `arguments`.
    public init(_ arguments: [String] = []) throws {
        let script = TestFixtures.packageRoot.appendingPathComponent("Scripts/gst-rtsp-server.py").path
        let output = Pipe()
        process = try Subprocess.launch("/usr/bin/python3", [script] + arguments, standardOutput: output.fileHandleForWriting)
        try? output.fileHandleForWriting.close()
        // The script's one line, read as it comes (an early exit ends the read with nothing).
        var line = ""
        while !line.contains("\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            line += String(decoding: data, as: UTF8.self)
        }
        guard let range = line.range(of: #"rtsp://127\.0\.0\.1:[0-9]+/test"#, options: .regularExpression) else {
            process.terminate()
            throw ScriptFailed(output: line)
        }
        url = String(line[range])
    }

    /// Ends the script and waits for it. SIGKILL: the test process's blocked signals are
    /// inherited, so the script's SIGTERM handler may never run.
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Scripts/gst-rtsp-server.py ended without printing its URL.
    public struct ScriptFailed: Error, CustomStringConvertible {
        /// What the script printed.
        public var output: String
        public var description: String { "Scripts/gst-rtsp-server.py printed no URL: \(output)" }
    }
}
