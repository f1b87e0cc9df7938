public import H264
public import HEVC

/// H.265 Annex-B ⇄ HVCC for `h264 convert`, as ``FLVConversion`` is for FLV: the stream's
/// access units as HVCC samples back to back with their `hvcC`, and back.
public enum HEVCConversion {
    /// Annex-B → HVCC (4-byte lengths) and its `hvcC`, with what `h264 inspect` reads past in
    /// the input (``HEVCStreamInspection/diagnostics``).
    ///
    /// - Parameters:
    ///   - bytes: the Annex-B byte stream.
    ///   - parameterSetsInBand: true (`hev1`) to leave the parameter sets in the samples too;
    ///     false (`hvc1`) to keep them in the record only.
    /// - Throws: lost framing, a stream without an SPS, and the parse errors of its first
    ///   parameter sets.
    public static func hvcc(fromAnnexB bytes: [UInt8], parameterSetsInBand: Bool) throws(MediaError)
        -> (hvcc: [UInt8], configuration: HEVCDecoderConfigurationRecord, diagnostics: [MediaError]) {
        let inspection = try HEVCStreamInspection(annexB: bytes)
        let (record, samples) = try HEVCDecoderConfigurationRecord.hvcc(accessUnits: inspection.accessUnits, parameterSetsInBand: parameterSetsInBand)
        return (Array(samples.map(\.data).joined()), record, inspection.diagnostics.map(\.error))
    }

    /// Length-prefixed samples back to back (AVCC or HVCC) → Annex-B, with the parameter sets of
    /// their configuration record, which tells the codec: an `hvcC` (its arrays before each IRAP
    /// picture, as `hevc_mp4toannexb`) or else an `avcC` (SPS and PPS before each IDR).
    ///
    /// - Parameters:
    ///   - samples: the samples.
    ///   - configuration: the bytes of the `hvcC` or `avcC`.
    ///   - lengthSize: the samples' length size; nil for the record's.
    /// - Throws: a malformed record, a length size other than 1, 2 or 4, and lost framing.
    public static func annexB(fromSamples samples: [UInt8], configuration: [UInt8], lengthSize: Int? = nil) throws(MediaError) -> [UInt8] {
        if let record = HEVCDecoderConfigurationRecord.recognizing(configuration) {
            return try AnnexB.fromHVCC(samples, lengthSize: lengthSize ?? record.nalUnitLengthSize, configuration: record)
        }
        let record = try AVCDecoderConfigurationRecord(extradata: configuration)
        return try AnnexB.fromAVCCStream(samples, lengthSize: lengthSize ?? record.nalUnitLengthSize, parameterSets: record)
    }
}
