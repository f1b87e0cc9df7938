import Testing
import H264
import H264TestSupport

/// Access-unit boundaries on hand-built streams (clause 7.4.1.2.3 / 7.4.1.2.4).
@Suite(.ownThread) struct AccessUnitAssemblerTests {
    static func cut(_ nalUnits: [[UInt8]], assembler: AccessUnitAssembler = AccessUnitAssembler()) -> [[Int]] {
        var assembler = assembler
        var result: [[Int]] = []
        var offset = 0
        for nal in nalUnits {
            if let unit = assembler.append(nalUnit: nal, streamOffset: offset) {
                result.append(unit.nalUnitTypes.map { Int($0.rawValue) })
            }
            offset += nal.count + 4
        }
        if let unit = assembler.finish(streamLength: offset) { result.append(unit.nalUnitTypes.map { Int($0.rawValue) }) }
        return result
    }

    let sps = SyntheticStream.sps()
    let pps = SyntheticStream.pps()

    @Test func slicesOfOnePictureStayTogether() {
        let units = Self.cut([sps, pps,
                              SyntheticStream.slice(idr: true, firstMb: 0), SyntheticStream.slice(idr: true, firstMb: 2),
                              SyntheticStream.slice(idr: false, firstMb: 0, frameNum: 1, pocLsb: 2),
                              SyntheticStream.slice(idr: false, firstMb: 2, frameNum: 1, pocLsb: 2)])
        #expect(units == [[7, 8, 5, 5], [1, 1]])
    }

    @Test func arbitrarySliceOrderStaysOnePicture() {
        // Baseline allows slices in any order: first_mb_in_slice decreasing is not a new picture.
        let units = Self.cut([sps, pps,
                              SyntheticStream.slice(idr: true, firstMb: 2), SyntheticStream.slice(idr: true, firstMb: 0),
                              SyntheticStream.slice(idr: false, firstMb: 2, frameNum: 1, pocLsb: 2),
                              SyntheticStream.slice(idr: false, firstMb: 0, frameNum: 1, pocLsb: 2)])
        #expect(units == [[7, 8, 5, 5], [1, 1]])
    }

    @Test func repeatedIdrPicIdStillSplitsPictures() {
        // Non-conforming but common: every IDR with idr_pic_id 0 and identical headers.
        let units = Self.cut([sps, pps, SyntheticStream.slice(idr: true), SyntheticStream.slice(idr: true),
                              SyntheticStream.slice(idr: true)])
        #expect(units == [[7, 8, 5], [5], [5]])
    }

    @Test func idrPicIdChangeSplitsPictures() {
        let units = Self.cut([sps, pps, SyntheticStream.slice(idr: true, firstMb: 1, idrPicId: 0),
                              SyntheticStream.slice(idr: true, firstMb: 1, idrPicId: 1)])
        #expect(units == [[7, 8, 5], [5]])
    }

    @Test func nalRefIdcZeroSplitsPictures() {
        let units = Self.cut([sps, pps, SyntheticStream.slice(idr: true),
                              SyntheticStream.slice(idr: false, firstMb: 1, frameNum: 1, refIdc: 2),
                              SyntheticStream.slice(idr: false, firstMb: 2, frameNum: 1, refIdc: 0)])
        #expect(units == [[7, 8, 5], [1], [1]])
    }

    @Test func delimiterSeiAndParameterSetsOpenAccessUnitsAfterAPicture() {
        let aud: [UInt8] = [0x09, 0xF0]
        let sei: [UInt8] = [0x06, 0x05, 0x01, 0x00, 0x80]
        let units = Self.cut([aud, sps, pps, sei, SyntheticStream.slice(idr: true),
                              aud, SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
                              sei, SyntheticStream.slice(idr: false, frameNum: 2, pocLsb: 4),
                              pps, SyntheticStream.slice(idr: false, frameNum: 3, pocLsb: 6)])
        #expect(units == [[9, 7, 8, 6, 5], [9, 1], [6, 1], [8, 1]])
    }

    @Test func endOfSequenceAndStreamStayWithThePictureBefore() {
        let eos: [UInt8] = [0x0A]
        let eob: [UInt8] = [0x0B]
        let filler: [UInt8] = [0x0C, 0xFF, 0x80]
        let units = Self.cut([sps, pps, SyntheticStream.slice(idr: true), filler, eos,
                              SyntheticStream.slice(idr: true, idrPicId: 1), eob, eob,
                              SyntheticStream.slice(idr: true, idrPicId: 0), eos, eob])
        #expect(units == [[7, 8, 5, 12, 10], [5, 11], [11], [5, 10, 11]])
    }

    @Test func redundantPictureStaysWithPrimary() {
        let ppsR = SyntheticStream.pps(redundantPicCntPresent: true)
        let units = Self.cut([sps, ppsR,
                              SyntheticStream.slice(idr: true, redundantPicCnt: 0),
                              SyntheticStream.slice(idr: true, redundantPicCnt: 1),
                              SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2, redundantPicCnt: 0),
                              SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2, redundantPicCnt: 1)])
        #expect(units == [[7, 8, 5, 5], [1, 1]])
    }

    @Test func unknownParameterSetsFallBackAndAreReported() {
        var assembler = AccessUnitAssembler()
        var units: [AccessUnit] = []
        for (index, nal) in [SyntheticStream.slice(idr: true), SyntheticStream.slice(idr: true, firstMb: 2),
                             SyntheticStream.slice(idr: true)].enumerated() {
            if let unit = assembler.append(nalUnit: nal, streamOffset: index * 100) { units.append(unit) }
        }
        if let unit = assembler.finish(streamLength: 300) { units.append(unit) }
        #expect(units.map(\.nalUnitTypes.count) == [2, 1])
        #expect(units.map(\.byteCount) == [200, 100])
        #expect(assembler.errorCount == 3)
        #expect(assembler.recentErrors.first?.code == .missingParameterSet)
    }

    @Test func formatChangeIsMarked() {
        let big = SyntheticStream.sps(widthInMbs: 4)
        var assembler = AccessUnitAssembler()
        var units: [AccessUnit] = []
        var offset = 0
        for nal in [sps, pps, SyntheticStream.slice(idr: true), SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
                    big, pps, SyntheticStream.slice(idr: true, idrPicId: 1)] {
            if let unit = assembler.append(nalUnit: nal, streamOffset: offset) { units.append(unit) }
            offset += nal.count
        }
        if let unit = assembler.finish() { units.append(unit) }
        #expect(units.map(\.formatChanged) == [false, false, true])
        #expect(units.map(\.isIDR) == [true, false, true])
        #expect(units[2].formatDescription?.sequenceParameterSets == [big])
        #expect(units[0].formatDescription?.sequenceParameterSets == [sps])
    }
}
