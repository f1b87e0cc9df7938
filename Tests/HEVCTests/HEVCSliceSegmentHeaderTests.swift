import Foundation
import Testing
import H264
import HEVC
import H264TestSupport

/// Slice segment headers' first elements against FFmpeg's `trace_headers`
/// (`Fixtures/hevc/expected-slices`, written by `Scripts/hevc-slice-headers.py`).
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCSliceSegmentHeaderTests {
    static func expected(_ stream: String) throws -> [[SyntaxElement]] {
        let json = try JSONSerialization.jsonObject(with: Data(TestFixtures.data("hevc/expected-slices/\(stream).json")))
        let headers = (json as? [String: Any])?["slice_segment_headers"] as? [[[Any]]] ?? []
        return headers.map { $0.compactMap { pair in
            guard pair.count == 2, let name = pair[0] as? String, let value = pair[1] as? Int else { return nil }
            return SyntaxElement(name: name, value: value)
        } }
    }

    @Test(arguments: TestFixtures.hevcStreams)
    func sliceSegmentHeadersMatchFFmpeg(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let expected = try Self.expected(stream)
        var parameterSets = HEVCParameterSetCache()
        var ours: [[SyntaxElement]] = []
        var pictures = 0
        for location in AnnexB.nalUnits(in: bytes) {
            let unit = bytes[location.range]
            let type = HEVCNALUnitHeader(unit[unit.startIndex], 0).nalUnitType
            if type.isParameterSet { try parameterSets.store(unit) }
            guard type.isVCL else { continue }
            ours.append(try HEVCSliceSegmentHeader.syntaxElements(nalUnit: unit, parameterSets: parameterSets))
            let header = try HEVCSliceSegmentHeader(nalUnit: unit, parameterSets: parameterSets)
            if header.firstSliceSegmentInPicFlag { pictures += 1 }
            #expect(header.nalUnitHeader.nalUnitType == type)
        }
        #expect(ours.count == expected.count)
        for (index, (a, b)) in zip(ours, expected).enumerated() {
            #expect(a == b, "slice segment \(index): \(firstDifference(a, b))")
        }
        #expect(pictures == HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes).count)
    }

    @Test func aSliceNamingAnUnknownPPSOrOfAnotherTypeThrows() throws {
        let bytes = try TestFixtures.data("hevc/tiny_16x16.265")
        let units = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
        let idr = try #require(units.first { HEVCNALUnitHeader($0[0], $0[1]).nalUnitType.isIDR })
        #expect(throws: MediaError.self) { try HEVCSliceSegmentHeader(nalUnit: idr, parameterSets: HEVCParameterSetCache()) }
        do {
            _ = try HEVCSliceSegmentHeader(nalUnit: idr, parameterSets: HEVCParameterSetCache())
        } catch {
            #expect(error.code == .missingParameterSet && error.field == "slice_pic_parameter_set_id")
        }
        do {
            _ = try HEVCSliceSegmentHeader(nalUnit: units[0], parameterSets: HEVCParameterSetCache())
        } catch {
            #expect(error.code == .unexpectedNALUnitType)
        }
    }
}

/// Picture order counts over the 12 streams: within each coded video sequence (from an IDR, a
/// BLA or the first picture) the counts are distinct and evenly spaced once sorted — every
/// picture has its place in output order, none twice, none missing — across CRA pictures, B
/// pyramids, temporal layers and fields. (None of the streams is long enough to wrap its POC LSB.)
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCPictureOrderCounterTests {
    @Test(arguments: TestFixtures.hevcStreams)
    func countsAreDistinctAndEvenlySpacedInEachSequence(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        var parameterSets = HEVCParameterSetCache()
        var counter = HEVCPictureOrderCounter()
        var sequences: [[Int]] = []
        for location in AnnexB.nalUnits(in: bytes) {
            let unit = bytes[location.range]
            let type = HEVCNALUnitHeader(unit[unit.startIndex], 0).nalUnitType
            if type.isParameterSet { try parameterSets.store(unit) }
            guard type.isVCL else { continue }
            let slice = try HEVCSliceSegmentHeader(nalUnit: unit, parameterSets: parameterSets)
            guard slice.firstSliceSegmentInPicFlag,
                  let sps = parameterSets.sequenceParameterSet(pictureParameterSetId: slice.slicePicParameterSetId) else { continue }
            let poc = counter.picOrderCntVal(of: slice, sps: sps)
            if type.isIDR || type.isBLA || sequences.isEmpty { sequences.append([]) }
            sequences[sequences.count - 1].append(poc)
        }
        let pictures = sequences.reduce(0) { $0 + $1.count }
        #expect(pictures == HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes).count)
        for (index, pocs) in sequences.enumerated() {
            let sorted = pocs.sorted()
            #expect(Set(sorted).count == sorted.count, "sequence \(index): \(pocs)")
            // mp4ff's blackframe is 3 pictures cut from a longer GOP: POC 0, 5, 1 (as FFmpeg reads
            // slice_pic_order_cnt_lsb in Fixtures/hevc/expected-slices).
            let steps = Set(zip(sorted, sorted.dropFirst()).map { $1 - $0 })
            #expect(stream == "mp4ff_blackframe.265" ? pocs == [0, 5, 1] : steps.count <= 1, "sequence \(index): \(pocs)")
        }
    }
}
