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

/// FFmpeg's reading of a conformance stream (`expected/NAME.json`).
public struct ExpectedStream: Sendable {
    /// One access unit as FFmpeg's parser cut it.
    public struct AccessUnit: Sendable, Equatable {
        /// Bytes the access unit covers.
        public var bytes: Int
        /// NAL unit types inside.
        public var nalTypes: [Int]
    }
    /// Access units in order.
    public var accessUnits: [AccessUnit]
    /// Each distinct SPS's syntax elements, trailing rbsp bits removed.
    public var sps: [[SyntaxPair]]
    /// Each distinct PPS's syntax elements, trailing rbsp bits removed.
    public var pps: [[SyntaxPair]]
    /// The NAL unit types of all access units, concatenated.
    public var nalTypes: [Int] { accessUnits.flatMap(\.nalTypes) }
    /// The `ffprobe` object.
    public var ffprobe: [String: any Sendable]

    /// A syntax element name and value.
    public struct SyntaxPair: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        public var value: Int
        public init(name: String, value: Int) { self.name = name; self.value = value }
        public var description: String { "\(name)=\(value)" }
    }

    /// Loads `expected/NAME.json` from the shared fixtures.
    public static func load(_ stream: String) throws -> ExpectedStream {
        let data = try Data(contentsOf: TestFixtures.shared.appendingPathComponent("expected/\(stream).json"))
        return try parse(data)
    }

    /// Parses an expected-stream JSON document (also the output of `h264 inspect --json`).
    public static func parse(_ data: Data) throws -> ExpectedStream {
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CocoaError(.coderReadCorrupt)
        }
        let units = (object["access_units"] as? [[String: Any]] ?? []).map {
            AccessUnit(bytes: ($0["bytes"] as? Int) ?? -1, nalTypes: ($0["nal_types"] as? [Int]) ?? [])
        }
        func sets(_ key: String) -> [[SyntaxPair]] {
            (object[key] as? [[[Any]]] ?? []).map { set in
                set.compactMap { pair -> SyntaxPair? in
                    guard pair.count == 2, let name = pair[0] as? String, let value = pair[1] as? Int else { return nil }
                    if name == "rbsp_stop_one_bit" || name == "rbsp_alignment_zero_bit" { return nil }
                    return SyntaxPair(name: name, value: value)
                }
            }
        }
        var probe: [String: any Sendable] = [:]
        for (key, value) in object["ffprobe"] as? [String: Any] ?? [:] {
            if let v = value as? Int { probe[key] = v } else if let v = value as? String { probe[key] = v }
        }
        return ExpectedStream(accessUnits: units, sps: sets("sps"), pps: sets("pps"), ffprobe: probe)
    }
}
