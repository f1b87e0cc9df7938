import Foundation
import Testing
import H264TestSupport

/// The helpers that keep a test honest about its peers: ``PeerPort`` (a peer told its port is
/// waited for by its own socket on it, and another port is tried when it could not bind) and
/// ``TestProcesses`` (a cancelled test case — its time limit exceeded — kills what it started).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct PeerPortTests {
    /// A listener on the port given as its argument (python3, as the scripts of the tests).
    static func listener(_ port: Int) throws -> Process {
        try Subprocess.launch("/usr/bin/python3", ["-c", """
            import socket, sys, time
            s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(60)
            """, "\(port)"])
    }

    @Test func aListenerIsFoundOnItsPort() throws {
        let (listener, port) = try PeerPort.start(.tcpListening, { try Self.listener($0) }, process: { $0 })
        defer { listener.terminate() }
        #expect(PeerPort.ports(of: listener.processIdentifier, .tcpListening) == [port])
    }

    /// The port is held by the test (bound, not listening): the peer cannot bind it and exits,
    /// and with that one port given there is no other to try.
    @Test func aPeerThatCannotBindIsNotBound() throws {
        let taken = try LoopbackTCP.NotListening()
        #expect(throws: PeerPort.NotBound.self) {
            try PeerPort.start(.tcpListening, port: taken.port, { try Self.listener($0) }, process: { $0 })
        }
    }

    /// `cancel()` kills each process's group: `timeout`'s child as well, so a read of the pipe
    /// they share ends.
    @Test func cancellingKillsTheProcessGroups() throws {
        let processes = TestProcesses()
        let pipe = Pipe()
        let started = try TestProcesses.$current.withValue(processes) {
            try Subprocess.launch("timeout", ["60", "sleep", "60"], standardOutput: pipe.fileHandleForWriting)
        }
        try pipe.fileHandleForWriting.close()
        processes.cancel()
        started.waitUntilExit()
        #expect(started.terminationReason == .uncaughtSignal && started.terminationStatus == SIGKILL)
        #expect(pipe.fileHandleForReading.readDataToEndOfFile().isEmpty, "the pipe's last writer (sleep) ended")
    }
}
