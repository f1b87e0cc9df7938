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
}

@Test func executableIsBuilt() {
    #expect(FileManager.default.isExecutableFile(atPath: CLI.executable.path), "\(CLI.executable.path)")
}
