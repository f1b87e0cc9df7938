public import Foundation

/// Locates test data: the project's own `Fixtures/` and the shared fixtures beside the checkout
/// (`../shared/fixtures`, always present in CI).
public enum TestFixtures {
    /// The package root (the folder holding Package.swift).
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        // Tests/H264TestSupport/Fixtures.swift → package root
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// The project's committed fixtures folder.
    public static let local: URL = packageRoot.appendingPathComponent("Fixtures")

    /// `../shared/fixtures`, or `H264_SHARED_FIXTURES` when set.
    public static let shared: URL = {
        if let path = ProcessInfo.processInfo.environment["H264_SHARED_FIXTURES"] {
            return URL(fileURLWithPath: path)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    }()

    /// True when the shared fixtures are present. In CI (`CI` set) they must be: tests that
    /// need them fail rather than skip.
    public static var sharedAvailable: Bool {
        FileManager.default.fileExists(atPath: shared.appendingPathComponent("conformance").path)
    }

    /// True when shared-fixture tests should run: the fixtures exist, or CI demands them (and
    /// the test then fails loudly on the missing files).
    public static var runSharedTests: Bool {
        sharedAvailable || ProcessInfo.processInfo.environment["CI"] != nil
    }

    /// The names of the conformance streams, sorted.
    public static var conformanceStreams: [String] {
        let dir = shared.appendingPathComponent("conformance")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted()
    }

    /// Reads a shared fixture by relative path (e.g. `conformance/BA1_FT_C.264`).
    public static func sharedData(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: shared.appendingPathComponent(relativePath)))
    }

    /// Reads a committed fixture by relative path.
    public static func localData(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: local.appendingPathComponent(relativePath)))
    }
}
