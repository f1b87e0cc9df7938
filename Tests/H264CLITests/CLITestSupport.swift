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
    /// Standard input and error go through temporary files, so no pipe can fill up and block.
    static func run(_ arguments: [String], stdin: Data? = nil) throws -> Result {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        let errURL = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let errHandle = try FileHandle(forWritingTo: errURL)
        process.standardError = errHandle
        if let stdin {
            let inURL = dir.appendingPathComponent("stdin")
            try stdin.write(to: inURL)
            process.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try errHandle.close()
        let stderrText = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        return Result(status: process.terminationStatus, stdout: stdoutData, stderr: stderrText)
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
