public import H264

/// What `h264 inspect` reads off a stream: its NAL units, access units, distinct parameter sets
/// (element by element) and what was read past, with the JSON (``json()``) and the table
/// (``table()``) the command prints.
public struct StreamInspection: Sendable {
    /// A problem read past: a tolerable value kept, or a damaged unit skipped.
    public struct Diagnostic: Hashable, Sendable {
        /// Whether the problem was a kept value or a skipped unit.
        public enum Kind: String, Hashable, Sendable {
            /// A value out of range that was kept (the rest reads the same).
            case warning
            /// A damaged unit (or one that refers to what is missing) that was skipped or read around.
            case skipped
        }
        /// A warning or a skip.
        public var kind: Kind
        /// What was found, where.
        public var error: MediaError

        /// A diagnostic of `kind` for `error`.
        ///
        /// - Parameters:
        ///   - kind: a kept value or a skipped unit.
        ///   - error: what was found, where.
        public init(kind: Kind, error: MediaError) {
            self.kind = kind
            self.error = error
        }
    }

    /// One NAL unit of the stream.
    public struct NALUnitRow: Hashable, Sendable {
        /// Where its start code (Annex-B) or length prefix (AVCC) begins.
        public var offset: Int
        /// Its size without the start code or length prefix.
        public var size: Int
        /// Its header.
        public var header: NALUnitHeader
    }

    /// A distinct parameter set and its syntax elements.
    public struct ParameterSetDump: Hashable, Sendable {
        /// The NAL unit, header byte included.
        public var nalUnit: [UInt8]
        /// Its syntax elements in clause 7.3 order.
        public var elements: [SyntaxElement]
        /// Where its header byte is (0 for one from the configuration record).
        public var offset: Int
    }

    /// The NAL units that have a valid header, in stream order.
    public var nalUnits: [NALUnitRow] = []
    /// The access units, in stream order.
    public var accessUnits: [AccessUnit] = []
    /// The distinct sequence parameter sets, the first of each in stream order.
    public var sequenceParameterSets: [ParameterSetDump] = []
    /// The distinct picture parameter sets, the first of each in stream order.
    public var pictureParameterSets: [ParameterSetDump] = []
    /// What was read past: tolerable values kept (warnings) and damaged units skipped, in stream
    /// order, each distinct warning once.
    public var diagnostics: [Diagnostic] = []

    /// Reads a stream: Annex-B when `lengthSize` is nil, AVCC otherwise.
    ///
    /// - Parameters:
    ///   - bytes: the stream.
    ///   - configurationRecord: an `avcC` whose parameter sets come before the stream's.
    ///   - lengthSize: the AVCC length size, or nil for Annex-B.
    /// - Throws: lost framing (a stream that is not Annex-B, an AVCC length past the end) and
    ///   parameter sets of the configuration record that do not parse.
    public init(bytes: [UInt8], configurationRecord: AVCDecoderConfigurationRecord?, lengthSize: Int?) throws(MediaError) {
        var units: [(offset: Int, range: Range<Int>)] = []
        if let lengthSize {
            let reading = try AVCC.read(bytes, lengthSize: lengthSize)
            for range in reading.nalUnits {
                // A unit of the Annex-B part is where its start code is (3 or 4 bytes before it).
                let annexB = reading.annexBOffset.map { range.lowerBound > $0 } ?? false
                let prefix = annexB ? (range.lowerBound >= 4 && bytes[range.lowerBound - 4] == 0 ? 4 : 3) : lengthSize
                units.append((range.lowerBound - prefix, range))
            }
            diagnostics += reading.warnings.map { Diagnostic(kind: .warning, error: $0) }
            diagnostics += reading.skipped.map { Diagnostic(kind: .skipped, error: $0) }
        } else {
            let locations: [NALUnitLocation]
            do {
                locations = try AnnexB.nalUnits(validating: bytes)
            } catch {
                var hinted = error
                hinted.message += " (AVCC input needs --length-size or --config)"
                throw hinted
            }
            units = locations.map { ($0.startCodeOffset, $0.range) }
        }

        var cache = ParameterSetCache()
        var assembler = AccessUnitAssembler()
        if let configurationRecord {
            for sps in configurationRecord.sequenceParameterSets { try dump(sps, offset: 0, cache: &cache) }
            for pps in configurationRecord.pictureParameterSets { try dump(pps, offset: 0, cache: &cache) }
            assembler = AccessUnitAssembler(parameterSets: cache)
        }
        let pass = InspectionDiagnostics.inspect(bytes, units: units, assembler: &assembler) { nal, offset, range in
            // A damaged unit (forbidden_zero_bit set) is skipped by the assembler, which says so.
            guard let header = try? NALUnitHeader(validating: nal) else { return }
            nalUnits.append(NALUnitRow(offset: offset, size: range.count, header: header))
            // Parameter sets that do not parse are reported by the assembler too.
            if header.nalUnitType.isParameterSet {
                try? dump(Array(nal), offset: range.lowerBound, cache: &cache)
            }
        }
        accessUnits = pass.accessUnits
        diagnostics += pass.diagnostics
    }

    private mutating func dump(_ nalUnit: [UInt8], offset: Int, cache: inout ParameterSetCache) throws(MediaError) {
        do {
            let header = try NALUnitHeader(validating: nalUnit)
            if header.nalUnitType == .sequenceParameterSet {
                let elements = try SequenceParameterSet.syntaxElements(nalUnit: nalUnit)
                if !sequenceParameterSets.contains(where: { $0.elements == elements }) {
                    sequenceParameterSets.append(ParameterSetDump(nalUnit: nalUnit, elements: elements, offset: offset))
                }
            } else {
                let elements = try PictureParameterSet.syntaxElements(nalUnit: nalUnit, sequenceParameterSets: cache.sequenceParameterSets)
                if !pictureParameterSets.contains(where: { $0.elements == elements }) {
                    pictureParameterSets.append(ParameterSetDump(nalUnit: nalUnit, elements: elements, offset: offset))
                }
            }
            try cache.store(nalUnit)
        } catch {
            throw error.offset(by: offset)
        }
    }

    // MARK: Output

    /// The JSON of `h264 inspect --json`: `access_units` (offset, bytes, nal_types), `sps` and
    /// `pps` (name/value pairs), `diagnostics` (kind, code, field, byte_offset, bit_offset,
    /// message), on one line.
    public func json() -> String {
        var out = "{\"access_units\":["
        for (index, unit) in accessUnits.enumerated() {
            if index > 0 { out += "," }
            out += "{\"offset\":\(unit.streamOffset),\"bytes\":\(unit.byteCount),\"nal_types\":["
            out += unit.nalUnitTypes.map { String($0.rawValue) }.joined(separator: ",")
            out += "]}"
        }
        out += "],\"sps\":["
        out += sequenceParameterSets.map { Self.jsonElements($0.elements) }.joined(separator: ",")
        out += "],\"pps\":["
        out += pictureParameterSets.map { Self.jsonElements($0.elements) }.joined(separator: ",")
        out += "],\"diagnostics\":["
        out += diagnostics.map(Self.jsonDiagnostic).joined(separator: ",")
        out += "]}"
        return out
    }

    /// `{"kind":"warning","code":…,"field":…,"byte_offset":…,"bit_offset":…,"message":…}`.
    static func jsonDiagnostic(_ diagnostic: Diagnostic) -> String {
        let error = diagnostic.error
        var fields = ["\"kind\":\(jsonString(diagnostic.kind.rawValue))", "\"code\":\(jsonString(error.code.rawValue))"]
        fields.append("\"field\":" + (error.field.map(jsonString) ?? "null"))
        fields.append("\"byte_offset\":" + (error.byteOffset.map(String.init) ?? "null"))
        fields.append("\"bit_offset\":" + (error.bitOffset.map(String.init) ?? "null"))
        fields.append("\"message\":\(jsonString(error.message))")
        return "{" + fields.joined(separator: ",") + "}"
    }

    static func jsonElements(_ elements: [SyntaxElement]) -> String {
        "[" + elements.map { "[\(jsonString($0.name)),\($0.value)]" }.joined(separator: ",") + "]"
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The table `h264 inspect` prints: one row per NAL unit, the counts, and one line per
    /// distinct SPS and PPS.
    public func table() -> String {
        var lines: [String] = []
        lines.append(Self.pad("offset", 10) + Self.pad("size", 9) + Self.pad("type", 6) + Self.pad("ref", 5) + "name")
        for row in nalUnits {
            lines.append(Self.pad(String(row.offset), 10) + Self.pad(String(row.size), 9) + Self.pad(String(row.header.nalUnitType.rawValue), 6)
                         + Self.pad(String(row.header.nalRefIdc), 5) + row.header.nalUnitType.name)
        }
        let pictures = accessUnits.filter(\.hasPicture).count
        let idr = accessUnits.filter(\.isIDR).count
        lines.append("")
        lines.append("\(nalUnits.count) NAL units, \(accessUnits.count) access units (\(pictures) with a picture, \(idr) IDR)")
        for dump in sequenceParameterSets {
            guard let sps = try? SequenceParameterSet(nalUnit: dump.nalUnit) else { continue }
            var line = Self.sequenceParameterSetLine(
                id: sps.seqParameterSetId, profile: sps.profileName, level: "\(sps.level)", coded: (sps.codedWidth, sps.codedHeight),
                display: (sps.displayWidth, sps.displayHeight), framesPerSecond: sps.frameRate, chromaFormatIdc: sps.chromaFormatIdc,
                bitDepth: sps.bitDepthLuma)
            line += sps.frameMbsOnlyFlag ? ", progressive" : (sps.mbAdaptiveFrameFieldFlag ? ", MBAFF" : ", field/frame")
            lines.append(line)
        }
        var spsById: [Int: SequenceParameterSet] = [:]
        for dump in sequenceParameterSets {
            if let sps = try? SequenceParameterSet(nalUnit: dump.nalUnit) { spsById[sps.seqParameterSetId] = sps }
        }
        for dump in pictureParameterSets {
            guard let pps = try? PictureParameterSet(nalUnit: dump.nalUnit, sequenceParameterSets: spsById) else { continue }
            var line = "PPS \(pps.picParameterSetId) → SPS \(pps.seqParameterSetId): "
            line += pps.entropyCodingModeFlag ? "CABAC" : "CAVLC"
            if pps.transform8x8ModeFlag { line += ", 8x8 transform" }
            if pps.numSliceGroupsMinus1 > 0 { line += ", \(pps.numSliceGroupsMinus1 + 1) slice groups" }
            if pps.weightedPredFlag || pps.weightedBipredIdc != 0 { line += ", weighted prediction" }
            line += ", pic_init_qp \(26 + pps.picInitQpMinus26)"
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// An SPS's line of the table, alike for both codecs:
    /// `SPS 0: High, level 3.1, coded 1280x720, display 1280x720, 30 fps, chroma 4:2:0, 8-bit`.
    static func sequenceParameterSetLine(id: Int, profile: String, level: String, coded: (Int, Int), display: (Int, Int),
                                         framesPerSecond: Double?, chromaFormatIdc: Int, bitDepth: Int) -> String {
        "SPS \(id): \(profile), level \(level), coded \(coded.0)x\(coded.1), display \(display.0)x\(display.1), "
            + (framesPerSecond.map { "\(formatRate($0)) fps, " } ?? "frame rate not signalled, ")
            + "chroma \(chromaName(chromaFormatIdc)), \(bitDepth)-bit"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func formatRate(_ rate: Double) -> String {
        let rounded = (rate * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func chromaName(_ idc: Int) -> String {
        switch idc {
        case 0: return "4:0:0"
        case 1: return "4:2:0"
        case 2: return "4:2:2"
        default: return "4:4:4"
        }
    }
}
