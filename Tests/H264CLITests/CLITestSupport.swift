import Foundation
import Testing
import H264TestSupport

/// Runs the built `h264` executable.
enum CLI {
    static var executable: URL { ServeProcess.h264Executable }

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs `h264 ARGS…`, feeding `stdin` if given, and waits for it to exit.
    static func run(_ arguments: [String], stdin: Data? = nil) throws -> Result {
        let output = try Subprocess.run(executable.path, arguments, stdin: stdin.map { [UInt8]($0) })
        return Result(status: output.status, stdout: Data(output.stdout), stderr: output.stderr)
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("h264-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

@Test(.ownThread) func executableIsBuilt() {
    #expect(FileManager.default.isExecutableFile(atPath: CLI.executable.path), "\(CLI.executable.path)")
}
