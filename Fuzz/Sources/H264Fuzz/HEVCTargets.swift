import H264
import MediaContainers
import HEVC

extension FuzzTarget {
    /// `hevc-ps`: the input as Annex-B; every NAL unit goes to the VPS, SPS and PPS parsers and
    /// their syntax-element dumps (a PPS with the SPSs parsed before it) and to the slice segment
    /// header reader (with the parameter sets before it), and the input whole to
    /// `HEVCDecoderConfigurationRecord(parsing:)`. Parse and dump agree; derived values do not
    /// trap and the display size is never empty; a parsed record writes bytes that parse back
    /// to itself, and a record built from the parsed parameter sets does too.
    static func hevcParameterSets(_ bytes: [UInt8]) {
        var spsById: [Int: HEVCSequenceParameterSet] = [:]
        var parameterSets: [[UInt8]] = []
        var cache = HEVCParameterSetCache()
        for location in AnnexB.nalUnits(in: bytes) {
            let unit = Array(bytes[location.range])
            let vps = try? HEVCVideoParameterSet(nalUnit: unit)
            check((vps == nil) == ((try? HEVCVideoParameterSet.syntaxElements(nalUnit: unit)) == nil), "VPS parse and dump disagree")
            _ = vps?.frameRate
            let sps = try? HEVCSequenceParameterSet(nalUnit: unit)
            check((sps == nil) == ((try? HEVCSequenceParameterSet.syntaxElements(nalUnit: unit)) == nil), "SPS parse and dump disagree")
            if let sps {
                spsById[sps.spsSeqParameterSetId] = sps
                _ = (sps.codedWidth, sps.codedHeight, sps.frameRate, sps.profileName, sps.picSizeInCtbsY, sps.maxNumReorderPics)
                check(sps.displayWidth > 0 && sps.displayHeight > 0, "empty display size")
            }
            let pps = try? HEVCPictureParameterSet(nalUnit: unit, sequenceParameterSets: spsById)
            let dump = try? HEVCPictureParameterSet.syntaxElements(nalUnit: unit, sequenceParameterSets: spsById)
            check((pps == nil) == (dump == nil), "PPS parse and dump disagree")
            if vps != nil || sps != nil || pps != nil {
                parameterSets.append(unit)
                _ = try? cache.store(unit)
            }
            _ = try? HEVCSliceSegmentHeader(nalUnit: unit, parameterSets: cache)
        }
        if let record = try? HEVCDecoderConfigurationRecord(parsing: bytes) {
            check((try? HEVCDecoderConfigurationRecord(parsing: record.bytes)) == record, "hvcC does not read back")
        }
        if let built = try? HEVCDecoderConfigurationRecord(parameterSets: parameterSets) {
            check((try? HEVCDecoderConfigurationRecord(parsing: built.bytes)) == built, "built hvcC does not read back")
        }
    }

    /// `hevc-assembler`: `HEVCAccessUnitAssembler` over the input as Annex-B: the access units
    /// partition the input and carry every NAL unit but the damaged ones, in order; each
    /// sample converts back to Annex-B with the same NAL units.
    static func hevcAssembler(_ bytes: [UInt8]) {
        let units = HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes)
        var offset = 0
        for unit in units {
            check(unit.streamOffset == offset, "access unit at \(unit.streamOffset), expected \(offset)")
            check(unit.nalUnitTypes.count == unit.nalUnits.count, "type count differs from unit count")
            offset += unit.byteCount
            let back = try? AnnexB.fromHVCC(unit.data, lengthSize: 4)
            check(back.map { b in AnnexB.nalUnits(in: b).map { b[$0.range] }.elementsEqual(unit.nalUnits) } ?? false,
                  "sample does not convert back")
        }
        if !units.isEmpty { check(offset == bytes.count, "access units cover \(offset) of \(bytes.count) bytes") }
        // Damaged units — a header cut short or with forbidden_zero_bit set or temporal id 0, a
        // slice segment with nothing after its header — are dropped; every other one is kept.
        let kept = AnnexB.nalUnits(in: bytes).map { bytes[$0.range] }.filter { unit in
            guard let header = try? HEVCNALUnitHeader(validating: unit) else { return false }
            let type = header.nalUnitType.rawValue
            return unit.count > 2 || !(type <= 9 || (16...21).contains(type))
        }
        check(units.flatMap(\.nalUnits).elementsEqual(kept), "NAL units lost or reordered")
        // What `h264 inspect` and `convert` make of it: the same access units, output that never traps.
        _ = AnnexB.carriesHEVC(bytes)
        check(AnnexB.codec(ofStreamBeginning: bytes, isComplete: true) != nil, "a whole stream's codec is always told")
        _ = AnnexB.codec(ofStreamBeginning: bytes, isComplete: false)
        if let inspection = try? HEVCStreamInspection(annexB: bytes) {
            check(inspection.accessUnits == units, "the inspection cut other access units")
            _ = inspection.json()
            _ = inspection.table()
        }
        if let (record, samples) = try? HEVCDecoderConfigurationRecord.hvcc(fromAnnexB: bytes, parameterSetsInBand: false) {
            check(HEVCDecoderConfigurationRecord.recognizing(record.bytes) != nil || record.arrays.allSatisfy { $0.nalUnitType != .sequenceParameterSet },
                  "a record with an SPS is not recognized")
            _ = try? AnnexB.fromHVCC(Array(samples.map(\.data).joined()), lengthSize: 4, configuration: record)
        }
    }
}
