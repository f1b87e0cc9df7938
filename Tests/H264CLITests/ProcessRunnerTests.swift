import Foundation
import Testing
import H264TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The test process runner (`Subprocess`, `LoggingProcess`): what a child gets as its standard
/// streams, also when this process's descriptor 0 is free — as when CI starts the tests with no
/// standard input and a file that took descriptor 0 has been closed again — where Foundation's
/// `Process` gave the next pipe descriptor 0 and then closed it in the child, so that FFmpeg took
/// its first socket for a keyboard.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct ProcessRunnerTests {
    /// Set (to a file path) in the child run of ``theSameWhenDescriptorZeroIsFree()``.
    static let markerVariable = "H264_TEST_STDIN_CLOSED_MARKER"

    @Test func childrenReadDevNullAndWriteToTheRunnersPipes() throws {
        let marker = ProcessInfo.processInfo.environment[Self.markerVariable]
        // In the child run only (a process of its own): free descriptor 0, which its parent's
        // runner set to /dev/null and nothing here uses.
        if marker != nil { close(0) }
        let script = "readlink /proc/self/fd/0; echo out; echo err >&2"
        let run = try Subprocess.run("/bin/sh", ["-c", script])
        #expect(run.status == 0)
        #expect(String(decoding: run.stdout, as: UTF8.self) == "/dev/null\nout\n")
        #expect(run.stderr == "err\n")
        let logging = try LoggingProcess(executable: URL(fileURLWithPath: "/bin/sh"),
                                         ["-c", "readlink /proc/self/fd/0 >&2"]) { $0.hasSuffix("\n") }
        #expect(logging.waitForExit(timeout: 30) == 0)
        #expect(logging.waitForLogEnd() == "/dev/null\n")
        if let marker {
            try Data("ran\n".utf8).write(to: URL(fileURLWithPath: marker))
        }
    }

    @Test func theSameWhenDescriptorZeroIsFree() throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("h264-stdin-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        // This test binary again, filtered to the test above, which frees descriptor 0 first.
        let run = try Subprocess.run("/usr/bin/env", [
            "\(Self.markerVariable)=\(marker)", executable, "--testing-library", "swift-testing",
            "--filter", "childrenReadDevNullAndWriteToTheRunnersPipes",
        ])
        let output = String(decoding: run.stdout, as: UTF8.self) + run.stderr
        #expect(run.status == 0, "\(output)")
        #expect((try? String(contentsOfFile: marker, encoding: .utf8)) == "ran\n", "the child did not run the test: \(output)")
    }
}
