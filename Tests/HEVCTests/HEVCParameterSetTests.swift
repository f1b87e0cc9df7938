import Foundation
import Testing
import H264
import HEVC
import H264TestSupport

/// Every distinct VPS, SPS and PPS of an Annex-B H.265 stream (trailing bits left out), in
/// order of first appearance, and the first SPS parsed.
func dumpHEVCParameterSets(_ stream: [UInt8]) throws
    -> (vps: [[SyntaxElement]], sps: [[SyntaxElement]], pps: [[SyntaxElement]], firstSPS: HEVCSequenceParameterSet?) {
    var spsByID: [Int: HEVCSequenceParameterSet] = [:]
    var lists: [HEVCNALUnitType: [[SyntaxElement]]] = [:]
    var first: HEVCSequenceParameterSet?
    for unit in ReferenceAnnexB.split(stream) {
        let type = HEVCNALUnitHeader(unit[unit.startIndex], unit[unit.startIndex + 1]).nalUnitType
        let elements: [SyntaxElement]
        switch type {
        case .videoParameterSet:
            _ = try HEVCVideoParameterSet(nalUnit: unit)
            elements = try HEVCVideoParameterSet.syntaxElements(nalUnit: unit)
        case .sequenceParameterSet:
            let sps = try HEVCSequenceParameterSet(nalUnit: unit)
            spsByID[sps.spsSeqParameterSetId] = sps
            if first == nil { first = sps }
            elements = try HEVCSequenceParameterSet.syntaxElements(nalUnit: unit)
        case .pictureParameterSet:
            _ = try HEVCPictureParameterSet(nalUnit: unit, sequenceParameterSets: spsByID)
            elements = try HEVCPictureParameterSet.syntaxElements(nalUnit: unit, sequenceParameterSets: spsByID)
        default:
            continue
        }
        let kept = elements.filter { !$0.isRBSPTrailingBit }
        if !(lists[type] ?? []).contains(kept) { lists[type, default: []].append(kept) }
    }
    return (lists[.videoParameterSet] ?? [], lists[.sequenceParameterSet] ?? [], lists[.pictureParameterSet] ?? [], first)
}

@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCParameterSetTests {
    @Test func thereAreTwelveStreams() {
        #expect(TestFixtures.hevcStreams.count == 12)
    }

    /// Each stream's distinct VPS, SPS and PPS, dumped element by element, equal FFmpeg 5.1's
    /// `trace_headers` reading in `hevc/expected/NAME.json`.
    @Test(arguments: TestFixtures.hevcStreams)
    func parameterSetsMatchFFmpeg(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let expected = try ExpectedStream.loadHEVC(stream)
        let ours = try dumpHEVCParameterSets(bytes)
        #expect(!expected.vps.isEmpty && !expected.sps.isEmpty && !expected.pps.isEmpty)
        for (kind, mine, theirs) in [("VPS", ours.vps, expected.vps), ("SPS", ours.sps, expected.sps), ("PPS", ours.pps, expected.pps)] {
            #expect(mine.count == theirs.count, "\(kind) count")
            for (a, b) in zip(mine, theirs) {
                #expect(a == b, "\(kind) differs: \(firstDifference(a, b))")
            }
        }
    }

    /// Sizes, profile, level, chroma format, bit depth and frame rate of each stream's SPS against ffprobe.
    @Test(arguments: TestFixtures.hevcStreams)
    func derivedValuesMatchFFprobe(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let probe = try ExpectedStream.loadHEVC(stream).ffprobe
        let sps = try #require(try dumpHEVCParameterSets(bytes).firstSPS)
        #expect(sps.displayWidth == probe["width"] as? Int)
        #expect(sps.displayHeight == probe["height"] as? Int)
        #expect(sps.codedWidth == probe["coded_width"] as? Int)
        #expect(sps.codedHeight == probe["coded_height"] as? Int)
        #expect(sps.profileName == probe["profile"] as? String)
        #expect(sps.generalLevelIdc == probe["level"] as? Int)
        let format = try #require(probe["pix_fmt"] as? String)
        let chroma = format.contains("444") ? 3 : format.contains("422") ? 2 : 1
        #expect(sps.chromaFormatIdc == chroma, "\(format)")
        let depth = format.hasSuffix("10le") ? 10 : format.hasSuffix("12le") ? 12 : 8
        #expect(sps.bitDepthLuma == depth && sps.bitDepthChroma == depth, "\(format)")
        #expect(sps.vuiParameters?.videoFullRangeFlag ?? false == format.hasPrefix("yuvj"), "\(format)")
        if let rate = sps.frameRate, let expected = probe["r_frame_rate"] as? String {
            #expect(rate.description == expected)
        }
    }
}
