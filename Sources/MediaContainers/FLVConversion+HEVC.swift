public import H264
public import HEVC

extension FLVConversion {
    /// An H.265 Annex-B stream as a video-only FLV in Enhanced RTMP `hvc1` tags: `onMetaData`
    /// (`videocodecid` the FourCC), the hvcC (`hvc1`: the parameter sets out of band) as the
    /// sequence header, one tag per access unit with times from the picture order counts
    /// (clause 8.3.1), and an end of sequence.
    ///
    /// - Throws: lost framing, a stream without an SPS, the parse errors of its first parameter
    ///   sets, and the errors of `FLVWriter`.
    static func flv(fromHEVCAnnexB bytes: [UInt8], frameRate: Double?) throws(MediaError) -> [UInt8] {
        let units = try HEVCStreamInspection(annexB: bytes).accessUnits.filter(\.hasPicture)
        let (record, samples) = try HEVCDecoderConfigurationRecord.hvcc(accessUnits: units, parameterSetsInBand: false)
        let sps = record.sequenceParameterSet
        let rate = frameRate ?? sps?.frameRate?.framesPerSecond ?? FrameRate.unsignalled.framesPerSecond
        let times = timestamps(pictureOrder: pictureOrder(of: units), frameRate: rate)
        var writer = FLVWriter(syntax: .enhanced)
        let end = Double(times.map(\.presentation).max() ?? 0) + 1000 / rate
        try writer.appendMetadata(FLVMetadata(duration: end / 1000, width: sps?.displayWidth ?? 0, height: sps?.displayHeight ?? 0,
                                              frameRate: rate, codec: .hevc))
        try writer.appendSequenceHeader(.hevc(record))
        for (sample, time) in zip(samples, times) {
            try writer.appendFrame(sample.data, isKeyframe: sample.isIRAP, decodeTime: time.decode, presentationTime: time.presentation,
                                   codec: .hevc)
        }
        try writer.appendEndOfSequence(timestamp: times.last?.decode ?? 0, codec: .hevc)
        return writer.takeBytes()
    }

    /// For each access unit in decoding order: whether its picture order count restarts (an
    /// IDR or BLA picture, or the first after an end of sequence) and its `PicOrderCntVal`, from
    /// its first slice segment header (0 when that does not parse).
    static func pictureOrder(of units: [HEVCAccessUnit]) -> [(startsSequence: Bool, picOrderCnt: Int)] {
        var parameterSets = HEVCParameterSetCache()
        var counter = HEVCPictureOrderCounter()
        var afterEndOfSequence = true
        return units.map { unit in
            var count = 0, restarts = false, found = false
            for nalUnit in unit.nalUnits {
                let type = HEVCNALUnitHeader(nalUnit[nalUnit.startIndex], 0).nalUnitType
                if type.isParameterSet { _ = try? parameterSets.store(nalUnit) }
                if type == .endOfSequence {
                    counter.endOfSequence()
                    afterEndOfSequence = true
                }
                guard type.isVCL, !found,
                      let slice = try? HEVCSliceSegmentHeader(nalUnit: nalUnit, parameterSets: parameterSets),
                      slice.firstSliceSegmentInPicFlag,
                      let sps = parameterSets.sequenceParameterSet(pictureParameterSetId: slice.slicePicParameterSetId) else { continue }
                found = true
                restarts = type.isIDR || type.isBLA || afterEndOfSequence
                afterEndOfSequence = false
                count = counter.picOrderCntVal(of: slice, sps: sps)
            }
            return (restarts, count)
        }
    }
}
