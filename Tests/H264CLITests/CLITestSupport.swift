import Foundation
import Testing
import H264TestSupport

/// Runs the built `h264` executable.
enum CLI {
    static var executable: URL {
        // The test bundle lives in the same build products folder as the executable.
        let products = Bundle.main.bundleURL
        let candidates = [products.appendingPathComponent("h264"),
                          products.deletingLastPathComponent().appendingPathComponent("h264")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

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

@Test func executableIsBuilt() {
    #expect(FileManager.default.isExecutableFile(atPath: CLI.executable.path), "\(CLI.executable.path)")
}
