public import Foundation

/// A server script run with /usr/bin/python3 that prints, once it listens, one line on its
/// standard output with the URL it serves (Scripts/gst-rtsp-server.py, Scripts/quirky-camera.py):
/// the URL is read from that line, never from a log.
public enum ScriptServer {
    /// Starts `Scripts/NAME` with `arguments` and returns it with the first match of
    /// `urlPattern` (a regular expression) in its first line; throws ``NoURL`` (the process
    /// ended) when the line has none.
    public static func launch(_ name: String, _ arguments: [String], urlPattern: String) throws -> (Process, String) {
        let script = TestFixtures.packageRoot.appendingPathComponent("Scripts/\(name)").path
        let output = Pipe()
        let process = try Subprocess.launch("/usr/bin/python3", [script] + arguments, standardOutput: output.fileHandleForWriting)
        try? output.fileHandleForWriting.close()
        // The script's one line, read as it comes (an early exit ends the read with nothing).
        var line = ""
        while !line.contains("\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            line += String(decoding: data, as: UTF8.self)
        }
        guard let range = line.range(of: urlPattern, options: .regularExpression) else {
            process.terminate()
            process.waitUntilExit()
            throw NoURL(script: name, output: line)
        }
        return (process, String(line[range]))
    }

    /// The script ended without printing its URL.
    public struct NoURL: Error, CustomStringConvertible {
        /// The script's file name.
        public var script: String
        /// What the script printed.
        public var output: String
        public var description: String { "Scripts/\(script) printed no URL: \(output)" }
    }
}
