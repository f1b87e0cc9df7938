public import Foundation
import H264

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `h264 serve INPUT --port 0 …` as a subprocess on loopback: the port is read from its first
/// line on standard error, and ``stop()`` sends SIGTERM (the server must then exit 0).
public final class ServeProcess: Sendable {
    public let process: Process
    public let port: Int
    private let log = Locked("")

    /// Starts `executable serve input --port 0 arguments…`, under `nice -n N` when `nice` is
    /// given (where raising is not allowed, nice says so on standard error and runs it at
    /// normal priority; `nice` execs the server, so the process id stays the server's).
    public init(executable: URL, input: String, _ arguments: [String], nice: Int32? = nil) throws {
        _ = ignoreSIGPIPE
        process = Process()
        let command = [executable.path, "serve", input, "--port", "0"] + arguments
        if let nice {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/nice")
            process.arguments = ["-n", String(nice)] + command
        } else {
            process.executableURL = executable
            process.arguments = Array(command.dropFirst())
        }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let listening = DispatchSemaphore(value: 0)
        let handle = err.fileHandleForReading
        try process.run()
        let log = self.log
        Thread.detachNewThread {
            var signalled = false
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                let ready = log.withLock { text in
                    text += String(decoding: data, as: UTF8.self)
                    return text.contains("listening on") && text.contains("\n")
                }
                if !signalled, ready {
                    signalled = true
                    listening.signal()
                }
            }
            if !signalled { listening.signal() }
        }
        _ = listening.wait(timeout: .now() + 30)
        let text = log.withLock { $0 }
        guard let range = text.range(of: "tcp://127.0.0.1:"),
              let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            process.terminate()
            throw LoopbackError("h264 serve did not start: \(text)")
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
    public var stderr: String { log.withLock { $0 } }

    /// SIGTERM, then the exit status (waits at most 10 s; -1 if it did not exit).
    public func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        let exited = DispatchSemaphore(value: 0)
        let process = self.process
        Thread.detachNewThread { process.waitUntilExit(); exited.signal() }
        process.terminate()
        guard exited.wait(timeout: .now() + 10) == .success else { return -1 }
        return process.terminationStatus
    }

    /// Ends the process whatever happened (test cleanup).
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}

private let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()
