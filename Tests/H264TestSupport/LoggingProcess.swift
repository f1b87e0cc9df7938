public import Foundation
import H264

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command-line process started for a test, its standard error read as it comes: the
/// initializer returns once the process has written what `isReady` looks for (a server's
/// `listening on …` line), has ended, or 30 s have passed; the test then reads the port from
/// ``stderr`` and, at the end, the whole log with ``waitForLogEnd()``.
///
/// The one launcher of `h264 serve` (``ServeProcess``), `h264 serve --rtsp` and
/// `h264 receive --listen` in the tests.
public final class LoggingProcess: Sendable {
    /// The process (running once the initializer returns, unless it failed at once).
    public let process: Process
    private let log = Locked("")
    /// Signalled when standard error has been read to its end (the process has exited).
    private let logEnded = DispatchSemaphore(value: 0)

    /// Starts `executable arguments…` with standard input and output on /dev/null and returns
    /// once `isReady(what it wrote on standard error so far)` is true, or it exited, or after 30 s.
    public init(executable: URL, _ arguments: [String], isReady: @escaping @Sendable (String) -> Bool) throws {
        _ = ignoreSIGPIPE
        try Subprocess.checkKeyboard(executable.path, arguments)
        StandardDescriptors.ensureOpen()
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let ready = DispatchSemaphore(value: 0)
        let handle = err.fileHandleForReading
        try process.run()
        let log = self.log, ended = logEnded
        Thread.detachNewThread {
            var signalled = false
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                let text = log.withLock { text in
                    text += String(decoding: data, as: UTF8.self)
                    return text
                }
                if !signalled, isReady(text) {
                    signalled = true
                    ready.signal()
                }
            }
            if !signalled { ready.signal() }
            ended.signal()
        }
        _ = ready.wait(timeout: .now() + 30)
    }

    /// What the process wrote on standard error so far.
    public var stderr: String { log.withLock { $0 } }

    /// The decimal number that follows the first `prefix` in ``stderr`` (a port), or nil.
    public func number(after prefix: String) -> Int? {
        let text = stderr
        guard let range = text.range(of: prefix) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// SIGTERM, then the exit status (waits at most 10 s; -1 if it did not exit).
    public func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        return waitForExit(timeout: 10, killing: false)
    }

    /// Waits for the process to end by itself: its exit status, or -1 when it did not end within
    /// `timeout` seconds (then it is killed when `killing`).
    public func waitForExit(timeout: Double, killing: Bool = true) -> Int32 {
        let exited = DispatchSemaphore(value: 0)
        let process = self.process
        Thread.detachNewThread { process.waitUntilExit(); exited.signal() }
        guard exited.wait(timeout: .now() + timeout) == .success else {
            if killing { kill() }
            return -1
        }
        return process.terminationStatus
    }

    /// Everything the process wrote on standard error, once it has exited and its standard
    /// error has been read to the end (waits at most 10 s for that).
    public func waitForLogEnd() -> String {
        _ = logEnded.wait(timeout: .now() + 10)
        logEnded.signal() // for a later call
        return stderr
    }

    /// Ends the process whatever happened (test cleanup).
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    deinit { kill() }
}

private let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()
