public import Foundation
import H264

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `h264 serve INPUT --port 0 … --events -` as a subprocess on loopback: the port is read from
/// its `listening` event, and ``stop()`` sends SIGTERM (the server must then exit 0).
public final class ServeProcess: Sendable {
    public let process: Process
    public let port: Int
    private let running: LoggingProcess

    /// Starts `executable serve input --port 0 arguments…`, under `nice -n N` when `nice` is
    /// given (where raising is not allowed, nice says so on standard error and runs it at
    /// normal priority; `nice` execs the server, so the process id stays the server's).
    public init(executable: URL, input: String, _ arguments: [String], nice: Int32? = nil) throws {
        let command = [executable.path, "serve", input, "--port", "0"] + arguments
        if let nice {
            running = try LoggingProcess(executable: URL(fileURLWithPath: "/usr/bin/nice"), ["-n", String(nice)] + command,
                                         untilListening: "tcp")
        } else {
            running = try LoggingProcess(executable: executable, Array(command.dropFirst()), untilListening: "tcp")
        }
        process = running.process
        guard let port = running.listeningPort(scheme: "tcp") else {
            running.kill()
            throw LoopbackError("h264 serve did not start: \(running.stderr)")
        }
        self.port = port
    }

    /// The built `h264` executable: test bundles live in the same build products folder.
    public static var h264Executable: URL {
        let products = Bundle.main.bundleURL
        let candidates = [products.appendingPathComponent("h264"),
                          products.deletingLastPathComponent().appendingPathComponent("h264")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    /// What the server wrote on standard error so far.
    public var stderr: String { running.stderr }

    /// Every event the server wrote (`viewer-joined`, `viewer-skipped`, …), once it has exited.
    public func waitForEventsEnd() -> [[String: String]] { running.waitForEventsEnd() }

    /// SIGTERM, then the exit status (waits at most 10 s; -1 if it did not exit).
    public func stop() -> Int32 { running.stop() }

    /// Ends the process whatever happened (test cleanup).
    public func kill() { running.kill() }
}
