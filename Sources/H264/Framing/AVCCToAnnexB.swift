// AVCC (ISO/IEC 14496-15 length prefixes) → Annex-B (ITU-T H.264 Annex B start codes): one
// sample, a whole raw stream, or in place.

extension AnnexB {
    /// Which start code precedes each NAL unit written by the AVCC → Annex-B conversions.
    public enum StartCodeStyle: Hashable, Sendable {
        /// `00 00 00 01` before parameter sets (SPS, PPS, SPS extension) and before the first NAL
        /// unit of each access unit, where clause B.1.2 requires the `zero_byte`; `00 00 01`
        /// elsewhere. This is what FFmpeg's `h264_mp4toannexb` writes.
        case minimal
        /// `00 00 00 01` before every NAL unit, as the in-place conversion
        /// (`convertAVCCInPlace(_:)`) produces.
        case fourByte
    }

    /// Converts one AVCC sample (one access unit) to Annex-B.
    ///
    /// Does what FFmpeg's `h264_mp4toannexb` does: when the sample holds an IDR slice and
    /// `parameterSets` is given, the record's SPS (and SPS extensions) and PPS are inserted right
    /// before the first IDR slice unless the sample already carries them in-band before it (each
    /// kind is checked on its own: a sample with an in-band SPS but no PPS gets only the PPS).
    ///
    /// A sample that holds Annex-B where lengths belong (Chrome's MediaRecorder writes such MP4
    /// and Matroska samples) is read as `AVCC.read(_:lengthSize:allowingEmptyNALUnits:)`
    /// reads it — from the start code on, as Annex-B, as FFmpeg's decoder reads it — and its NAL
    /// units are written as those of an AVCC sample would be (parameter sets inserted the same
    /// way); damaged units there (`forbidden_zero_bit` set) are left out. A genuine AVCC sample
    /// whose first length happens to read `00 00 01 xx` or `00 00 00 01` still reads as AVCC.
    /// `AVCC.read(_:lengthSize:allowingEmptyNALUnits:)` gives the warning and
    /// the skipped units.
    ///
    /// - Parameters:
    ///   - sample: Length-prefixed NAL units of one access unit.
    ///   - lengthSize: The length prefix size: 1, 2 or 4.
    ///   - parameterSets: The stream's configuration record, to insert SPS/PPS before IDR
    ///     pictures; `nil` to insert nothing.
    ///   - startCodes: Which start codes to write (``StartCodeStyle/minimal`` by default).
    /// - Returns: The Annex-B bytes, built in one allocation.
    /// - Throws: the errors of `AVCC.nalUnits(in:lengthSize:allowingEmptyNALUnits:)`.
    public static func fromAVCC(_ sample: [UInt8], lengthSize: Int, parameterSets: AVCDecoderConfigurationRecord? = nil,
                                startCodes: StartCodeStyle = .minimal) throws(MediaError) -> [UInt8] {
        try convertFromAVCC(sample, lengthSize: lengthSize, parameterSets: parameterSets, startCodes: startCodes, wholeStream: false)
    }

    /// Converts a raw AVCC stream — many samples back to back, without container, as in a
    /// `.264` file written with length prefixes — to Annex-B.
    ///
    /// Annex-B where a length belongs is read as in `fromAVCC(_:lengthSize:parameterSets:startCodes:)`,
    /// from there to the end of the stream.
    ///
    /// Sample boundaries are not marked in such a stream, so access units are found by the rule
    /// ``AccessUnitAssembler`` follows (clauses 7.4.1.2.3 and 7.4.1.2.4), reading slice headers
    /// with the parameter sets seen so far in the stream (and those of `parameterSets`). Each
    /// access unit is then treated as `fromAVCC(_:lengthSize:parameterSets:startCodes:)`
    /// treats a sample.
    ///
    /// - Throws: the errors of `AVCC.nalUnits(in:lengthSize:allowingEmptyNALUnits:)`.
    public static func fromAVCCStream(_ stream: [UInt8], lengthSize: Int, parameterSets: AVCDecoderConfigurationRecord? = nil,
                                      startCodes: StartCodeStyle = .minimal) throws(MediaError) -> [UInt8] {
        try convertFromAVCC(stream, lengthSize: lengthSize, parameterSets: parameterSets, startCodes: startCodes, wholeStream: true)
    }

    /// Rewrites AVCC data with 4-byte lengths to Annex-B in place: each length becomes
    /// `00 00 00 01`.
    ///
    /// One pass that costs a few operations per NAL unit and touches no payload byte. Nothing
    /// is inserted (the buffer cannot grow): parameter sets must already be in-band. Where
    /// Annex-B stands instead of a length field (by the rule of
    /// `AVCC.read(_:lengthSize:allowingEmptyNALUnits:)`), the rest
    /// is left as it is: it is Annex-B already (its damaged units, if any, stay too).
    ///
    /// On error the NAL units before the bad length field have already been rewritten (the
    /// error's `byteOffset` says where the conversion stopped); validating first would cost a
    /// second walk over the buffer's length fields.
    ///
    /// - Throws: `MediaError.Code.truncated`, `MediaError.Code.lengthPastEnd` or
    ///   `MediaError.Code.emptyNALUnit`, with the byte offset of the length field.
    public static func convertAVCCInPlace(_ buffer: UnsafeMutableRawBufferPointer) throws(MediaError) {
        guard let base = buffer.baseAddress else { return }
        let startCode = UInt32(1).bigEndian
        _ = try AVCC.walk(UnsafeRawBufferPointer(buffer), lengthSize: 4, allowingEmptyNALUnits: false,
                          toleratingAnnexB: true) { lengthOffset, _ in
            base.storeBytes(of: startCode, toByteOffset: lengthOffset, as: UInt32.self)
        }
    }

    /// Rewrites AVCC data with 4-byte lengths to Annex-B in place (see
    /// `convertAVCCInPlace(_:)`).
    public static func convertAVCCInPlace(_ bytes: inout [UInt8]) throws(MediaError) {
        let result = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(MediaError) in try convertAVCCInPlace(buffer) }
        }
        try result.get()
    }

    // MARK: Internals

    /// A piece of Annex-B output: a NAL unit from the input, or a parameter set from the record.
    private enum Piece {
        case input(Range<Int>)
        case parameterSet([UInt8])
    }

    private static func convertFromAVCC(_ bytes: [UInt8], lengthSize: Int, parameterSets: AVCDecoderConfigurationRecord?,
                                        startCodes: StartCodeStyle, wholeStream: Bool) throws(MediaError) -> [UInt8] {
        let units = try AVCC.read(bytes, lengthSize: lengthSize).nalUnits
        return bytes.withUnsafeBytes { buffer in
            let starts = accessUnitStarts(buffer, units: units, parameterSets: parameterSets, wholeStream: wholeStream)
            var total = 0
            plan(buffer, units: units, starts: starts, parameterSets: parameterSets, startCodes: startCodes) { startCode, piece in
                switch piece {
                case .input(let range): total += startCode + range.count
                case .parameterSet(let unit): total += startCode + unit.count
                }
            }
            var output: [UInt8] = []
            output.reserveCapacity(total)
            plan(buffer, units: units, starts: starts, parameterSets: parameterSets, startCodes: startCodes) { startCode, piece in
                if startCode == 4 { output.append(0) }
                output.append(0)
                output.append(0)
                output.append(1)
                switch piece {
                case .input(let range): output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[range]))
                case .parameterSet(let unit): output.append(contentsOf: unit)
                }
            }
            return output
        }
    }

    /// Which NAL units begin an access unit: the first only for one sample; for a whole raw
    /// stream, the ``AccessUnitBoundary`` rule, reading slice headers with the parameter sets
    /// seen so far (seeded from the record).
    private static func accessUnitStarts(_ buffer: UnsafeRawBufferPointer, units: [Range<Int>],
                                         parameterSets: AVCDecoderConfigurationRecord?, wholeStream: Bool) -> [Bool] {
        guard wholeStream else { return units.indices.map { $0 == 0 } }
        var cache = parameterSets.flatMap { try? ParameterSetCache(configurationRecord: $0) } ?? ParameterSetCache()
        var boundary = AccessUnitBoundary()
        return units.map { range in
            let nalUnit = UnsafeRawBufferPointer(rebasing: buffer[range])
            // A unit with forbidden_zero_bit set is no NAL unit: it stays where it is.
            guard nalUnit[0] & 0x80 == 0 else { return boundary.isEmpty }
            let type = NALUnitHeader(byte: nalUnit[0]).nalUnitType
            let decision = boundary.decide(nalUnit, type: type, parameterSets: cache)
            // A slice whose header cannot be read stays where it is, like garbage.
            if decision.isDamaged { return boundary.isEmpty }
            let starts = boundary.isEmpty || decision.startsNew
            boundary.record(decision, type: type)
            if type == .sequenceParameterSet || type == .pictureParameterSet { _ = try? cache.store(nalUnit) }
            return starts
        }
    }

    /// Calls `visit` with each piece of output and its start code length, in order.
    private static func plan(_ buffer: UnsafeRawBufferPointer, units: [Range<Int>], starts: [Bool],
                             parameterSets: AVCDecoderConfigurationRecord?,
                             startCodes: StartCodeStyle, _ visit: (Int, Piece) -> Void) {
        var sawSPS = false
        var sawPPS = false
        var handledIDR = false
        for (index, range) in units.enumerated() {
            let type = buffer[range.lowerBound] & 0x1F
            let first = starts[index]
            if first {
                sawSPS = false
                sawPPS = false
                handledIDR = false
            }
            if type == NALUnitType.idrSlice.rawValue && !handledIDR, let parameterSets {
                handledIDR = true
                if !sawSPS {
                    for sps in parameterSets.sequenceParameterSets { visit(4, .parameterSet(sps)) }
                    for ext in parameterSets.highProfileExtension?.sequenceParameterSetExtensions ?? [] {
                        visit(4, .parameterSet(ext))
                    }
                }
                if !sawPPS {
                    for pps in parameterSets.pictureParameterSets { visit(4, .parameterSet(pps)) }
                }
            }
            if type == NALUnitType.sequenceParameterSet.rawValue { sawSPS = true }
            if type == NALUnitType.pictureParameterSet.rawValue { sawPPS = true }
            let isParameterSet = type == 7 || type == 8 || type == 13
            visit(first || isParameterSet || startCodes == .fourByte ? 4 : 3, .input(range))
        }
    }
}
