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
    public static func hvcc(fromAnnexB bytes: [UInt8], parameterSetsInBand: Bool) throws(H264Error)
        -> (hvcc: [UInt8], configuration: HEVCDecoderConfigurationRecord, diagnostics: [H264Error]) {
        let inspection = try HEVCStreamInspection(annexB: bytes)
        let (record, samples) = try HEVCDecoderConfigurationRecord.hvcc(accessUnits: inspection.accessUnits, parameterSetsInBand: parameterSetsInBand)
        return (Array(samples.map(\.data).joined()), record, inspection.diagnostics.map(\.error))
    }
}
