import Foundation
import Testing
import H264
import H264TestSupport

/// Dumps every distinct SPS and PPS of an Annex-B stream, in order of first appearance.
func dumpParameterSets(_ stream: [UInt8]) throws -> (sps: [[SyntaxElement]], pps: [[SyntaxElement]], parsedSPS: [SequenceParameterSet]) {
    var spsByID: [Int: SequenceParameterSet] = [:]
    var spsLists: [[SyntaxElement]] = [], ppsLists: [[SyntaxElement]] = []
    var parsed: [SequenceParameterSet] = []
    for unit in ReferenceAnnexB.split(stream) {
        switch unit.first.map({ $0 & 0x1F }) {
        case 7:
            let sps = try SequenceParameterSet(nalUnit: unit)
            spsByID[sps.seqParameterSetId] = sps
            let elements = try SequenceParameterSet.syntaxElements(nalUnit: unit).filter { !$0.isRBSPTrailingBit }
            if !spsLists.contains(elements) { spsLists.append(elements); parsed.append(sps) }
        case 8:
            _ = try PictureParameterSet(nalUnit: unit, sequenceParameterSets: spsByID)
            let elements = try PictureParameterSet.syntaxElements(nalUnit: unit, sequenceParameterSets: spsByID)
                .filter { !$0.isRBSPTrailingBit }
            if !ppsLists.contains(elements) { ppsLists.append(elements) }
        default:
            continue
        }
    }
    return (spsLists, ppsLists, parsed)
}

@Suite(.ownThread)
struct ConformanceParameterSetTests {
    /// Each conformance stream's distinct SPS/PPS, dumped element by element, equals FFmpeg 5.1's
    /// `trace_headers` reading in `expected/NAME.json`.
    @Test(arguments: TestFixtures.conformanceStreams)
    func parameterSetsMatchFFmpeg(stream: String) throws {
        let bytes = try TestFixtures.data("conformance/\(stream)")
        let expected = try ExpectedStream.load(stream)
        let ours = try dumpParameterSets(bytes)
        #expect(!expected.sps.isEmpty && !expected.pps.isEmpty)
        #expect(ours.sps.count == expected.sps.count)
        #expect(ours.pps.count == expected.pps.count)
        for (a, b) in zip(ours.sps, expected.sps) {
            #expect(a == b, "SPS differs: \(firstDifference(a, b))")
        }
        for (a, b) in zip(ours.pps, expected.pps) {
            #expect(a == b, "PPS differs: \(firstDifference(a, b))")
        }
    }

    @Test func thereAreSixtyThreeStreams() {
        #expect(TestFixtures.conformanceStreams.count == 63)
    }

    /// Coded and display size, profile name and level of every stream's first SPS against ffprobe.
    @Test(arguments: TestFixtures.conformanceStreams)
    func derivedValuesMatchFFprobe(stream: String) throws {
        let bytes = try TestFixtures.data("conformance/\(stream)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(TestFixtures.data("expected/\(stream).json"))) as? [String: Any])
        let probe = try #require(json["ffprobe"] as? [String: Any])
        let sps = try #require(try dumpParameterSets(bytes).parsedSPS.first)
        #expect(sps.displayWidth == probe["width"] as? Int)
        #expect(sps.displayHeight == probe["height"] as? Int)
        #expect(sps.codedWidth == probe["coded_width"] as? Int)
        #expect(sps.profileName == probe["profile"] as? String)
        #expect(sps.levelIdc == probe["level"] as? Int)
    }
}
