public import H264
public import HEVC

/// What `h264 inspect` reads off an H.265 Annex-B stream: its NAL units, access units,
/// distinct VPS, SPS and PPS (element by element, FFmpeg's `trace_headers` names) and what was
/// read past, with the JSON (``json()``, the shape of ``StreamInspection/json()`` with a `vps`
/// list) and the table (``table()``) the command prints.
public struct HEVCStreamInspection: Sendable {
    /// One NAL unit of the stream.
    public struct NALUnitRow: Hashable, Sendable {
        /// Where its start code begins.
        public var offset: Int
        /// Its size without the start code.
        public var size: Int
        /// Its two header bytes.
        public var header: HEVCNALUnitHeader
    }

    /// The NAL units that have a valid header, in stream order.
    public var nalUnits: [NALUnitRow] = []
    /// The access units, in stream order.
    public var accessUnits: [HEVCAccessUnit] = []
    /// The distinct video parameter sets, the first of each in stream order.
    public var videoParameterSets: [StreamInspection.ParameterSetDump] = []
    /// The distinct sequence parameter sets, the first of each in stream order.
    public var sequenceParameterSets: [StreamInspection.ParameterSetDump] = []
    /// The distinct picture parameter sets, the first of each in stream order.
    public var pictureParameterSets: [StreamInspection.ParameterSetDump] = []
    /// What was read past: tolerable values kept (warnings) and damaged units skipped, in stream
    /// order, each distinct warning once.
    public var diagnostics: [StreamInspection.Diagnostic] = []

    /// Reads an Annex-B byte stream of H.265 (`AnnexB.carriesHEVC(_:nalUnitLimit:)` tells one).
    ///
    /// - Parameter bytes: the stream.
    /// - Throws: lost framing (a stream that is not Annex-B).
    public init(annexB bytes: [UInt8]) throws(MediaError) {
        var assembler = HEVCAccessUnitAssembler()
        var sequenceParameterSetsById: [Int: HEVCSequenceParameterSet] = [:]
        let units = try AnnexB.nalUnits(validating: bytes).lazy.map { (offset: $0.startCodeOffset, range: $0.range) }
        let pass = InspectionDiagnostics.inspect(bytes, units: units, assembler: &assembler) { nal, offset, range in
            guard let header = try? HEVCNALUnitHeader(validating: nal) else { return }
            nalUnits.append(NALUnitRow(offset: offset, size: range.count, header: header))
            // Parameter sets that do not parse are reported by the assembler.
            if header.nalUnitType.isParameterSet, header.nuhLayerId == 0 {
                dump(Array(nal), type: header.nalUnitType, offset: range.lowerBound, sequenceParameterSets: &sequenceParameterSetsById)
            }
        }
        (accessUnits, diagnostics) = pass
    }

    private mutating func dump(_ nalUnit: [UInt8], type: HEVCNALUnitType, offset: Int,
                               sequenceParameterSets byId: inout [Int: HEVCSequenceParameterSet]) {
        func keep(_ elements: [SyntaxElement], in dumps: inout [StreamInspection.ParameterSetDump]) {
            guard !dumps.contains(where: { $0.elements == elements }) else { return }
            dumps.append(StreamInspection.ParameterSetDump(nalUnit: nalUnit, elements: elements, offset: offset))
        }
        switch type {
        case .videoParameterSet:
            if let elements = try? HEVCVideoParameterSet.syntaxElements(nalUnit: nalUnit) { keep(elements, in: &videoParameterSets) }
        case .sequenceParameterSet:
            guard let elements = try? HEVCSequenceParameterSet.syntaxElements(nalUnit: nalUnit) else { return }
            keep(elements, in: &sequenceParameterSets)
            if let sps = try? HEVCSequenceParameterSet(nalUnit: nalUnit) { byId[sps.spsSeqParameterSetId] = sps }
        default:
            if let elements = try? HEVCPictureParameterSet.syntaxElements(nalUnit: nalUnit, sequenceParameterSets: byId) {
                keep(elements, in: &pictureParameterSets)
            }
        }
    }

    // MARK: Output

    /// The JSON of `h264 inspect --json`: `access_units` (offset, bytes, nal_types), `vps`,
    /// `sps` and `pps` (name/value pairs), `diagnostics` (kind, code, field, byte_offset,
    /// bit_offset, message), on one line.
    public func json() -> String {
        var out = "{\"access_units\":["
        out += accessUnits.map { unit in
            "{\"offset\":\(unit.streamOffset),\"bytes\":\(unit.byteCount),\"nal_types\":["
                + unit.nalUnitTypes.map { String($0.rawValue) }.joined(separator: ",") + "]}"
        }.joined(separator: ",")
        for (key, dumps) in [("vps", videoParameterSets), ("sps", sequenceParameterSets), ("pps", pictureParameterSets)] {
            out += "],\"\(key)\":[" + dumps.map { StreamInspection.jsonElements($0.elements) }.joined(separator: ",")
        }
        out += "],\"diagnostics\":[" + diagnostics.map(StreamInspection.jsonDiagnostic).joined(separator: ",") + "]}"
        return out
    }

    /// The table `h264 inspect` prints: one row per NAL unit, the counts, and one line per
    /// distinct SPS.
    public func table() -> String {
        let pad = StreamInspection.pad
        var lines = [pad("offset", 10) + pad("size", 9) + pad("type", 6) + pad("layer", 7) + pad("tid", 5) + "name"]
        for row in nalUnits {
            lines.append(pad(String(row.offset), 10) + pad(String(row.size), 9) + pad(String(row.header.nalUnitType.rawValue), 6)
                         + pad(String(row.header.nuhLayerId), 7) + pad(String(row.header.temporalId), 5) + row.header.nalUnitType.name)
        }
        let pictures = accessUnits.filter(\.hasPicture).count
        let irap = accessUnits.filter(\.isIRAP).count
        lines.append("")
        lines.append("H.265: \(nalUnits.count) NAL units, \(accessUnits.count) access units (\(pictures) with a picture, \(irap) IRAP)")
        lines.append("\(videoParameterSets.count) VPS, \(sequenceParameterSets.count) SPS, \(pictureParameterSets.count) PPS")
        for dump in sequenceParameterSets {
            guard let sps = try? HEVCSequenceParameterSet(nalUnit: dump.nalUnit) else { continue }
            lines.append(StreamInspection.sequenceParameterSetLine(
                id: sps.spsSeqParameterSetId, profile: sps.profileName, level: "\(Double(sps.generalLevelIdc) / 30)",
                coded: (sps.codedWidth, sps.codedHeight), display: (sps.displayWidth, sps.displayHeight),
                framesPerSecond: sps.frameRate.map { Double($0.numerator) / Double($0.denominator) },
                chromaFormatIdc: sps.chromaFormatIdc, bitDepth: sps.bitDepthLuma))
        }
        return lines.joined(separator: "\n")
    }
}
