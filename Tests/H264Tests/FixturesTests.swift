import Foundation
import Testing
import H264TestSupport

/// The checkout carries everything the tests read: `Fixtures/PROVENANCE` lists every file below
/// `Fixtures/`, each listed file is there, and a missing one fails by name.
@Suite(.ownThread) struct FixturesTests {
    @Test func provenanceIsPresent() {
        #expect(FileManager.default.fileExists(atPath: TestFixtures.url("PROVENANCE").path))
        #expect(!TestFixtures.listed.isEmpty)
    }

    @Test func everyListedFileIsInTheCheckout() {
        for file in TestFixtures.listed {
            #expect(FileManager.default.fileExists(atPath: TestFixtures.url(file).path), "Fixtures/\(file) is listed in PROVENANCE but missing")
        }
    }

    @Test func everyFileIsListed() throws {
        let enumerator = try #require(FileManager.default.enumerator(atPath: TestFixtures.root.path))
        let listed = Set(TestFixtures.listed)
        var files: [String] = []
        while let file = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: TestFixtures.url(file).path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(file)
            }
        }
        #expect(files.count > 100)
        for file in files where file != "PROVENANCE" {
            #expect(listed.contains(file), "Fixtures/\(file) has no line in Fixtures/PROVENANCE")
        }
    }

    /// The 63 JVT conformance streams, each with FFmpeg's reading beside it in `expected/`.
    @Test func conformanceStreamsAndTheirReadings() {
        #expect(TestFixtures.conformanceStreams.count == 63)
        for stream in TestFixtures.conformanceStreams {
            #expect(TestFixtures.listed.contains("expected/\(stream).json"), "no expected/\(stream).json")
        }
    }

    /// What a test sees when a fixture is not there: an error naming the file.
    @Test func aMissingFixtureIsAnErrorNamingIt() {
        #expect {
            _ = try TestFixtures.data("conformance/NOT_THERE.264")
        } throws: { error in
            "\(error)".contains("Fixtures/conformance/NOT_THERE.264")
        }
        #expect(throws: FixtureMissing.self) { _ = try TestFixtures.path("yuv/none.yuv") }
    }
}
