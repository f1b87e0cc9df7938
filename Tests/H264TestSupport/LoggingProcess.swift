public import Foundation
import H264

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command-line process started for a test, its standard error read as it comes (the log,
/// for failure messages) and, when it is an `h264` server started with `--events -`, its
/// standard output read as JSON lines of events: the test learns ports and session states from
/// those (``events``, ``listeningPort``), never from the log.
///
/// The one launcher of `h264 serve` (``ServeProcess``), `h264 serve --rtsp` and
/// `h264 receive --listen` / `h264 receive SDP` in the tests.
public final class LoggingProcess: Sendable {
    /// The process (running once the initializer returns, unless it failed at once).
    public let process: Process
    private let log = Locked("")
    private let eventLines = Locked([[String: String]]())
    /// Signalled when standard error has been read to its end (the process has exited).
    private let logEnded = DispatchSemaphore(value: 0)
    /// Signalled when standard output has been read to its end.
    private let eventsEnded = DispatchSemaphore(value: 0)

    /// Starts `executable arguments…` with standard input on /dev/null and returns once
    /// `isReady(what it wrote on standard error so far)` is true, or it exited, or after 30 s.
    public convenience init(executable: URL, _ arguments: [String], isReady: @escaping @Sendable (String) -> Bool) throws {
        try self.init(executable: executable, arguments, logIsReady: isReady, eventsAreReady: nil)
    }

    /// Starts `executable arguments…` with standard input on /dev/null and returns at once: for
    /// a process whose readiness the test learns elsewhere (a socket it binds, events of the
    /// server it talks to) or does not need (nginx holds a player until the stream is published).
    public convenience init(executable: URL, _ arguments: [String]) throws {
        try self.init(executable: executable, arguments, logIsReady: nil, eventsAreReady: nil)
    }

    /// Starts an `h264` server: `executable arguments… --events -`, and returns once it has
    /// written a `listening` event with a `scheme://` URL (`rtsp`, `tcp`, `udp`), or it exited,
    /// or after 30 s.
    public convenience init(executable: URL, _ arguments: [String], untilListening scheme: String) throws {
        try self.init(executable: executable, arguments + ["--events", "-"], logIsReady: nil, eventsAreReady: { events in
            events.contains { $0["event"] == "listening" && $0["url"]?.hasPrefix(scheme + "://") == true }
        })
    }

    /// Starts an `h264` client (`h264 receive rtsp://… --reconnect`): `executable arguments…
    /// --events -`, and returns once it has written an event named `name` (`playing`), or it
    /// exited, or after 30 s.
    public convenience init(executable: URL, _ arguments: [String], untilEvent name: String) throws {
        try self.init(executable: executable, arguments + ["--events", "-"], logIsReady: nil, eventsAreReady: { events in
            events.contains { $0["event"] == name }
        })
    }

    /// Starts an `h264` client before its server (`h264 receive rtsp://… --reconnect` waiting
    /// for a camera that boots later): `executable arguments… --events -`, and returns at once,
    /// its events read as they come (``events``, ``wait(timeout:until:)``).
    public convenience init(executable: URL, readingEvents arguments: [String]) throws {
        try self.init(executable: executable, arguments + ["--events", "-"], logIsReady: nil, eventsAreReady: { _ in false },
                      waiting: false)
    }

    private init(executable: URL, _ arguments: [String], logIsReady: (@Sendable (String) -> Bool)?,
                 eventsAreReady: (@Sendable ([[String: String]]) -> Bool)?, waiting: Bool = true) throws {
        _ = ignoreSIGPIPE
        try Subprocess.checkKeyboard(executable.path, arguments)
        StandardDescriptors.ensureOpen()
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let err = Pipe(), out = Pipe()
        process.standardError = err
        process.standardOutput = eventsAreReady == nil ? FileHandle.nullDevice : out
        process.standardInput = FileHandle.nullDevice
        let ready = DispatchSemaphore(value: 0)
        try process.run()
        TestProcesses.register(process)
        let log = self.log, ended = logEnded, eventLines = self.eventLines, eventsEnded = self.eventsEnded
        Self.readChunks(err.fileHandleForReading) { data in
            let text = log.withLock { text in
                text += String(decoding: data, as: UTF8.self)
                return text
            }
            return logIsReady?(text) ?? false
        } ended: {
            if logIsReady != nil { ready.signal() }
            ended.signal()
        } ready: { ready.signal() }
        if let eventsAreReady {
            let pending = Locked([UInt8]())
            Self.readChunks(out.fileHandleForReading) { data in
                let lines = pending.withLock { pending -> [[UInt8]] in
                    pending += data
                    guard let last = pending.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
                    defer { pending.removeSubrange(...last) }
                    return pending[...last].split(separator: UInt8(ascii: "\n")).map(Array.init)
                }
                let parsed = lines.compactMap(Self.parse)
                return eventsAreReady(eventLines.withLock { events in
                    events += parsed
                    return events
                })
            } ended: {
                ready.signal()
                eventsEnded.signal()
            } ready: { ready.signal() }
        } else {
            eventsEnded.signal()
        }
        if waiting && (logIsReady != nil || eventsAreReady != nil) { _ = ready.wait(timeout: .now() + 30) }
    }

    /// Reads `handle` to its end on a thread of its own: `take` each chunk (true: signal
    /// `ready`, once), then `ended`.
    private static func readChunks(_ handle: FileHandle, take: @escaping @Sendable (Data) -> Bool,
                                   ended: @escaping @Sendable () -> Void, ready: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            var signalled = false
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                if take(data) && !signalled {
                    signalled = true
                    ready()
                }
            }
            ended()
        }
    }

    /// One JSON object line as strings by key (numbers written as decimals); nil if it is not one.
    private static func parse(_ line: [UInt8]) -> [String: String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { return nil }
        return object.mapValues { value in (value as? String) ?? "\(value)" }
    }

    /// The events the server wrote so far (`--events -`), each as strings by key.
    public var events: [[String: String]] { eventLines.withLock { $0 } }

    /// The events named `name` (`session-ended`) so far.
    public func events(named name: String) -> [[String: String]] { events.filter { $0["event"] == name } }

    /// Waits until `condition` holds for the events written so far, looking every 10 ms: true
    /// then; false after `timeout` seconds, or once the process has exited without it.
    public func wait(timeout: Double, until condition: ([[String: String]]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(events) { return true }
            if !process.isRunning { return condition(waitForEventsEnd()) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition(events)
    }

    /// The port of the first `listening` event whose URL begins with `scheme` (`rtsp`, `tcp`, `udp`).
    public func listeningPort(scheme: String) -> Int? {
        for event in events(named: "listening") {
            guard let url = event["url"], url.hasPrefix(scheme + "://") else { continue }
            let authority = url.dropFirst(scheme.count + 3).prefix { $0 != "/" }
            if let colon = authority.lastIndex(of: ":") { return Int(authority[authority.index(after: colon)...]) }
        }
        return nil
    }

    /// Every event the server wrote, once it has exited and its standard output has been read
    /// to the end (waits at most 10 s for that).
    public func waitForEventsEnd() -> [[String: String]] {
        _ = eventsEnded.wait(timeout: .now() + 10)
        eventsEnded.signal() // for a later call
        return events
    }

    /// What the process wrote on standard error so far.
    public var stderr: String { log.withLock { $0 } }

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
