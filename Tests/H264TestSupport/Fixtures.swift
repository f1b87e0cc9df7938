public import Foundation
public import H264
import MediaContainers

/// Locates test data. Every test reads only the checkout's own `Fixtures/` folder, whose files
/// are listed, with their origin and terms, in `Fixtures/PROVENANCE`. A missing file is a thrown
/// ``FixtureMissing`` that names it: the test fails, it is never skipped.
public enum TestFixtures {
    /// The package root (the folder holding Package.swift).
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        // Tests/H264TestSupport/Fixtures.swift → package root
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// The committed fixtures folder, `Fixtures/`.
    public static let root: URL = packageRoot.appendingPathComponent("Fixtures")

    /// The files `Fixtures/PROVENANCE` lists, as paths relative to `Fixtures/`, in its order.
    /// Empty when PROVENANCE itself is missing (``provenanceIsPresent`` then fails).
    public static let listed: [String] = {
        guard let text = try? String(contentsOf: root.appendingPathComponent("PROVENANCE"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let name = line.split(separator: "\t").first, !name.isEmpty else { return nil }
            return String(name)
        }
    }()

    /// The names of the 63 conformance streams (`Fixtures/conformance/`), sorted, as
    /// PROVENANCE lists them: a stream whose file is missing still gets its test, which fails.
    public static let conformanceStreams: [String] = listed
        .filter { $0.hasPrefix("conformance/") }
        .map { String($0.dropFirst("conformance/".count)) }
        .sorted()

    /// The names of the 12 H.265 streams (`Fixtures/hevc/*.265`), sorted, as PROVENANCE lists
    /// them; FFmpeg's reading of each is `hevc/expected/NAME.json`.
    public static let hevcStreams: [String] = listed
        .filter { $0.hasPrefix("hevc/") && $0.hasSuffix(".265") }
        .map { String($0.dropFirst("hevc/".count)) }
        .filter { !$0.contains("/") }
        .sorted()

    /// The URL of a fixture, by path relative to `Fixtures/`.
    public static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent(relativePath)
    }

    /// The file-system path of a fixture that exists; throws ``FixtureMissing`` naming it otherwise.
    public static func path(_ relativePath: String) throws -> String {
        let path = url(relativePath).path
        guard FileManager.default.fileExists(atPath: path) else { throw FixtureMissing(relativePath: relativePath) }
        return path
    }

    /// Reads a fixture by path relative to `Fixtures/` (e.g. `conformance/BA1_FT_C.264`).
    public static func data(_ relativePath: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: url(relativePath).path) else {
            throw FixtureMissing(relativePath: relativePath)
        }
        return [UInt8](data)
    }

    /// The frames of a y4m fixture (8-bit 4:2:0 only), each `width × height × 3 / 2` bytes, read
    /// by H264Media's y4m reader.
    public static func y4mFrames(_ relativePath: String) throws -> (width: Int, height: Int, frames: [[UInt8]]) {
        let bytes = try data(relativePath)
        do {
            let (header, frames) = try Y4MStreamReader.frames(in: bytes)
            return (header.width, header.height, frames)
        } catch {
            throw FixtureMissing(relativePath: relativePath, reason: "not readable y4m: \(error)")
        }
    }
}

/// A fixture the tests need is not in the checkout (or cannot be read as expected).
public struct FixtureMissing: Error, CustomStringConvertible {
    /// The path relative to `Fixtures/`.
    public var relativePath: String
    /// What is wrong with it.
    public var reason: String = "missing"

    /// Makes the error for `relativePath`.
    public init(relativePath: String, reason: String = "missing") {
        self.relativePath = relativePath
        self.reason = reason
    }

    /// Names the file and where it should be.
    public var description: String {
        "fixture Fixtures/\(relativePath): \(reason) (expected at \(TestFixtures.url(relativePath).path); see Fixtures/PROVENANCE)"
    }
}

/// FFmpeg's reading of a conformance stream (`expected/NAME.json`) or of an H.265 stream
/// (`hevc/expected/NAME.json`, with a `vps` list).
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
    public var sps: [[SyntaxElement]]
    /// Each distinct PPS's syntax elements, trailing rbsp bits removed.
    public var pps: [[SyntaxElement]]
    /// Each distinct VPS's syntax elements, trailing rbsp bits removed (H.265 only; empty otherwise).
    public var vps: [[SyntaxElement]] = []
    /// The NAL unit types of all access units, concatenated.
    public var nalTypes: [Int] { accessUnits.flatMap(\.nalTypes) }
    /// The `ffprobe` object.
    public var ffprobe: [String: any Sendable]

    /// Loads `Fixtures/expected/NAME.json`.
    public static func load(_ stream: String) throws -> ExpectedStream {
        try parse(Data(TestFixtures.data("expected/\(stream).json")))
    }

    /// Loads `Fixtures/hevc/expected/NAME.json`.
    public static func loadHEVC(_ stream: String) throws -> ExpectedStream {
        try parse(Data(TestFixtures.data("hevc/expected/\(stream).json")))
    }

    /// Parses an expected-stream JSON document (also the output of `h264 inspect --json`).
    public static func parse(_ data: Data) throws -> ExpectedStream {
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CocoaError(.coderReadCorrupt)
        }
        let units = (object["access_units"] as? [[String: Any]] ?? []).map {
            AccessUnit(bytes: ($0["bytes"] as? Int) ?? -1, nalTypes: ($0["nal_types"] as? [Int]) ?? [])
        }
        func sets(_ key: String) -> [[SyntaxElement]] {
            (object[key] as? [[[Any]]] ?? []).map { set in
                set.compactMap { pair -> SyntaxElement? in
                    guard pair.count == 2, let name = pair[0] as? String, let value = pair[1] as? Int else { return nil }
                    let element = SyntaxElement(name: name, value: value)
                    return element.isRBSPTrailingBit ? nil : element
                }
            }
        }
        var probe: [String: any Sendable] = [:]
        for (key, value) in object["ffprobe"] as? [String: Any] ?? [:] {
            if let v = value as? Int { probe[key] = v } else if let v = value as? String { probe[key] = v }
        }
        return ExpectedStream(accessUnits: units, sps: sets("sps"), pps: sets("pps"), vps: sets("vps"), ffprobe: probe)
    }
}

extension SyntaxElement {
    /// `rbsp_stop_one_bit` or `rbsp_alignment_zero_bit`: FFmpeg's trace lists them, the
    /// comparisons leave them out.
    public var isRBSPTrailingBit: Bool {
        name == "rbsp_stop_one_bit" || name == "rbsp_alignment_zero_bit"
    }
}

/// Reports the first differing element of two syntax element dumps, so a failure says where
/// ours and FFmpeg's part.
public func firstDifference(_ ours: [SyntaxElement], _ theirs: [SyntaxElement]) -> String {
    for (index, (a, b)) in zip(ours, theirs).enumerated() where a != b {
        return "element \(index): ours \(a), FFmpeg \(b)"
    }
    return "lengths \(ours.count) vs \(theirs.count)"
}
