public import MediaCore

// HVCC (ISO/IEC 14496-15 length prefixes with an hvcC record) ⇄ Annex-B, over the shared
// length-prefix reader (`AVCC.read`) and start-code scanner.

extension AnnexB {
    /// Converts a whole HVCC stream (samples back to back, their boundaries unknown) to Annex-B:
    /// every NAL unit of the record's arrays (VPS, SPS, PPS and any SEI) goes before the first
    /// slice segment of each IRAP picture (BLA, IDR, CRA; `first_slice_segment_in_pic_flag`
    /// set), whether or not the stream carries parameter sets of its own, and every NAL unit
    /// gets a 4-byte start code. For one sample whose bounds are known (an MP4 sample) use
    /// ``fromHVCCSample(_:lengthSize:configuration:)``, which inserts as FFmpeg does.
    ///
    /// Annex-B where lengths belong is read as `AVCC.read(_:lengthSize:allowingEmptyNALUnits:)`
    /// reads it, for H.264 and H.265 alike.
    ///
    /// - Parameters:
    ///   - sample: length-prefixed NAL units of one access unit.
    ///   - lengthSize: the length prefix size: 1, 2 or 4 (the record's ``HEVCDecoderConfigurationRecord/nalUnitLengthSize``).
    ///   - configuration: the stream's `hvcC`, to insert its NAL units before IRAP pictures;
    ///     `nil` to insert nothing.
    /// - Returns: the Annex-B bytes.
    /// - Throws: the errors of `AVCC.read(_:lengthSize:allowingEmptyNALUnits:)`.
    public static func fromHVCC(_ sample: [UInt8], lengthSize: Int,
                                configuration: HEVCDecoderConfigurationRecord? = nil) throws(MediaError) -> [UInt8] {
        try fromHVCC(sample, lengthSize: lengthSize, inserting: configuration?.nalUnits ?? []) { sample, range, _ in
            // first_slice_segment_in_pic_flag: the top bit after the two header bytes.
            range.count > HEVCNALUnitHeader.byteCount && sample[range.lowerBound + 2] & 0x80 != 0
                && HEVCNALUnitHeader(sample[range.lowerBound], 0).nalUnitType.isIRAP
        }
    }

    /// `sample`'s NAL units after 4-byte start codes, `inserted` before each one `insertsBefore`
    /// picks (given the sample, the unit's range and whether the units were inserted already).
    private static func fromHVCC(_ sample: [UInt8], lengthSize: Int, inserting inserted: [[UInt8]],
                                 before insertsBefore: ([UInt8], Range<Int>, Bool) -> Bool) throws(MediaError) -> [UInt8] {
        let units = try AVCC.read(sample, lengthSize: lengthSize).nalUnits
        var output: [UInt8] = []
        output.reserveCapacity(sample.count + units.count * 4 + inserted.reduce(0) { $0 + 4 + $1.count })
        var insertedAlready = false
        for range in units {
            if !inserted.isEmpty, insertsBefore(sample, range, insertedAlready) {
                for unit in inserted {
                    output += fourByteStartCode
                    output += unit
                }
                insertedAlready = true
            }
            output += fourByteStartCode
            output += sample[range]
        }
        return output
    }
}

extension AnnexB {
    /// Converts one HVCC sample (one access unit: an MP4 sample, an FLV tag) to Annex-B exactly
    /// as FFmpeg's `hevc_mp4toannexb` converts a packet: every NAL unit of the record's arrays
    /// (VPS, SPS, PPS and any SEI) goes once, before the sample's first IRAP NAL unit (BLA, IDR,
    /// CRA, reserved IRAP types 22–23), whether or not the sample carries parameter sets of its
    /// own; every NAL unit gets a 4-byte start code. Once a sample, not once a picture: an
    /// MV-HEVC sample (Apple's spatial video) whose base layer is an IDR and second layer a CRA
    /// gets the arrays before the IDR only, as FFmpeg gives them.
    ///
    /// Annex-B where lengths belong is read as `AVCC.read(_:lengthSize:allowingEmptyNALUnits:)`
    /// reads it.
    ///
    /// - Parameters:
    ///   - sample: length-prefixed NAL units of one access unit.
    ///   - lengthSize: the length prefix size: 1, 2 or 4.
    ///   - configuration: the stream's `hvcC`, to insert its NAL units; `nil` to insert nothing.
    /// - Returns: the Annex-B bytes.
    /// - Throws: the errors of `AVCC.read(_:lengthSize:allowingEmptyNALUnits:)`.
    public static func fromHVCCSample(_ sample: [UInt8], lengthSize: Int,
                                      configuration: HEVCDecoderConfigurationRecord? = nil) throws(MediaError) -> [UInt8] {
        try fromHVCC(sample, lengthSize: lengthSize, inserting: configuration?.nalUnits ?? []) { sample, range, insertedAlready in
            // FFmpeg's `is_irap`: nal_unit_type 16 (BLA_W_LP) … 23 (RSV_IRAP_VCL23), once a sample.
            !insertedAlready && (16...23).contains(sample[range.lowerBound] >> 1 & 0x3F)
        }
    }
}

extension HEVCDecoderConfigurationRecord {
    /// Cuts an Annex-B stream into HVCC samples (access units with 4-byte lengths, by the rule
    /// of ``HEVCAccessUnitAssembler``) and builds their `hvcC` from the first VPS, SPS and PPS of
    /// each id.
    ///
    /// - Parameters:
    ///   - bytes: the Annex-B byte stream.
    ///   - parameterSetsInBand: true (`hev1`) to leave the parameter sets in the samples too,
    ///     as FFmpeg's MP4 muxer does; false (`hvc1`) to take out of the samples those whose
    ///     bytes the record holds. A parameter set that changes mid-stream stays in band either
    ///     way, and the record's arrays are then marked incomplete.
    /// - Returns: the record and the samples, in decoding order.
    /// - Throws: `MediaError.Code.missingParameterSet` when the stream has no SPS, and
    ///   the parse errors of its first parameter sets.
    public static func hvcc(fromAnnexB bytes: [UInt8], parameterSetsInBand: Bool) throws(MediaError)
        -> (configuration: HEVCDecoderConfigurationRecord, samples: [HEVCAccessUnit]) {
        try hvcc(accessUnits: HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes), parameterSetsInBand: parameterSetsInBand)
    }

    /// `hvcc(fromAnnexB:parameterSetsInBand:)` of a stream already cut into access units
    /// (`h264 convert` has them from its inspection).
    package static func hvcc(accessUnits: [HEVCAccessUnit], parameterSetsInBand: Bool) throws(MediaError)
        -> (configuration: HEVCDecoderConfigurationRecord, samples: [HEVCAccessUnit]) {
        var first: [HEVCNALUnitType: [Int: [UInt8]]] = [:]
        var order: [[UInt8]] = []
        var changed = false
        for unit in accessUnits.lazy.flatMap(\.nalUnits) {
            let type = HEVCNALUnitHeader(unit[unit.startIndex], 0).nalUnitType
            guard type.isParameterSet, let id = HEVCParameterSetCache.parameterSetId(of: unit) else { continue }
            if let known = first[type]?[id] {
                if !known.elementsEqual(unit) { changed = true }
            } else {
                first[type, default: [:]][id] = Array(unit)
                order.append(Array(unit))
            }
        }
        // VPS, then SPS, then PPS, as the record's arrays list them.
        order.sort { ($0[0] >> 1) < ($1[0] >> 1) }
        let record = try HEVCDecoderConfigurationRecord(parameterSets: order, arrayCompleteness: !parameterSetsInBand && !changed)
        guard !parameterSetsInBand else { return (record, accessUnits) }
        let outOfBand = Set(order)
        let samples = accessUnits.map { unit in
            var sample = unit
            let kept = unit.nalUnits.filter { !outOfBand.contains(Array($0)) }
            sample.data = (try? AVCC.data(nalUnits: kept.map(Array.init))) ?? []
            sample.nalUnitTypes = kept.map { HEVCNALUnitHeader($0[$0.startIndex], 0).nalUnitType }
            return sample
        }
        return (record, samples)
    }
}
