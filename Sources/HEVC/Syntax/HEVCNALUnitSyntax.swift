public import MediaCore

/// A syntax structure read from one whole H.265 NAL unit by its clause 7.3 reading, with no
/// other input (the VPS, the SPS): the one pair of entries behind its public `init(nalUnit:)`
/// and `syntaxElements(nalUnit:)`.
protocol HEVCNALUnitSyntax {
    /// Reads the structure, its NAL unit header first.
    init(reader: inout BitReader) throws(MediaError)
}

extension HEVCNALUnitSyntax {
    /// The structure read from `nalUnit` (both header bytes first, emulation prevention bytes
    /// still present).
    static func read(nalUnit: some Collection<UInt8>) throws(MediaError) -> Self {
        try BitReader.readHEVC(nalUnit: nalUnit) { (reader) throws(MediaError) in try Self(reader: &reader) }.value
    }

    /// Every syntax element of `nalUnit` in bitstream order, with FFmpeg's `trace_headers` names.
    static func elements(nalUnit: some Collection<UInt8>) throws(MediaError) -> [SyntaxElement] {
        try BitReader.readHEVC(nalUnit: nalUnit, recordsElements: true) { (reader) throws(MediaError) in try Self(reader: &reader) }.elements
    }
}
