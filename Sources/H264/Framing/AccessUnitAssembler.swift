/// Groups NAL units into access units (clauses 7.4.1.2.3 and 7.4.1.2.4).
///
/// Where one access unit ends and the next begins is decided by one rule, shared with the raw
/// AVCC stream conversion (``AnnexB/fromAVCCStream(_:lengthSize:parameterSets:startCodes:)``):
/// a new access unit begins, once the current one holds a coded picture, with an access unit
/// delimiter, SPS, PPS, SEI or NAL unit types 14…18, or with the first VCL NAL unit of a new
/// primary coded picture (clause 7.4.1.2.4; a slice whose parameter sets are unknown falls back
/// to FFmpeg's rule, `first_mb_in_slice` not increasing). End of sequence and end of stream stay
/// with the access unit before them; redundant coded pictures stay with their primary picture.
///
/// A unit whose `forbidden_zero_bit` is set is not a NAL unit (garbage between start codes): it is
/// dropped and reported as ``H264Error/Code/forbiddenZeroBit``, and assembly goes on with the
/// next start code. So is a slice whose first header elements (``SliceHeader/Prefix``) cannot be
/// read (a NAL unit cut short), reported with the bit reader's error. A parameter set that does
/// not parse stays in its access unit's data but is not used.
///
/// Parameter sets are taken from the stream as they pass (and may be seeded from a
/// configuration record). Problems never stop assembly; they come in two kinds, kept apart:
/// - damaged: a unit that is not a NAL unit, a malformed parameter set (not stored), a slice
///   naming an unknown PPS — counted in ``errorCount``, the most recent kept in ``recentErrors``;
/// - tolerable: a value out of range that does not change how the rest is read (e.g. a VUI
///   `log2_max_mv_length_horizontal` of 16) — the value is kept, and the warning counted in
///   ``warningCount``, the most recent kept in ``recentWarnings``.
///
/// Only lost framing is fatal, and that is found before the assembler (by the Annex-B or AVCC
/// reader).
///
/// Feed NAL units in order with ``append(nalUnit:streamOffset:)``; each call returns the access
/// unit the NAL unit completed, if any. Call ``finish(streamLength:)`` at the end of the stream.
public struct AccessUnitAssembler: Sendable {
    /// The parameter sets seen so far.
    public private(set) var parameterSets: ParameterSetCache
    /// How many problems were met (damaged units skipped, malformed parameter sets, slices with
    /// unknown parameter sets).
    public private(set) var errorCount = 0
    /// The most recent problems, oldest first (at most ``recentErrorLimit``). A reader that
    /// wants every one compares ``errorCount`` before and after each append.
    public private(set) var recentErrors: [H264Error] = []
    /// How many tolerable problems were met: values out of range that were kept (the
    /// ``SequenceParameterSet/diagnostics`` of each new or changed parameter set, and of slice
    /// headers). The stream is read as if they were in range.
    public private(set) var warningCount = 0
    /// The most recent tolerable problems, oldest first (at most ``recentErrorLimit``), each
    /// with its NAL unit's stream offset as `byteOffset` and its bit offset in that NAL unit.
    public private(set) var recentWarnings: [H264Error] = []
    /// How many problems ``recentErrors`` and ``recentWarnings`` keep.
    public static let recentErrorLimit = 16

    private var data: [UInt8] = []
    private var types: [NALUnitType] = []
    private var startOffset = 0
    private var boundary = AccessUnitBoundary()
    private var lastFormat: FormatDescription?
    private var cachedFormat: (ppsId: Int, format: FormatDescription)?

    /// Creates an assembler, optionally knowing parameter sets already (e.g. from an avcC).
    public init(parameterSets: ParameterSetCache = ParameterSetCache()) {
        self.parameterSets = parameterSets
    }

    private mutating func warn(_ warning: H264Error) {
        warningCount += 1
        if recentWarnings.count == Self.recentErrorLimit { recentWarnings.removeFirst() }
        recentWarnings.append(warning)
    }

    private mutating func report(_ error: H264Error) {
        errorCount += 1
        if recentErrors.count == Self.recentErrorLimit { recentErrors.removeFirst() }
        recentErrors.append(error)
    }

    /// Adds the next NAL unit of the stream.
    ///
    /// - Parameters:
    ///   - nalUnit: the NAL unit, header byte first, without start code or length prefix.
    ///   - streamOffset: where the NAL unit's start code (with its leading zero byte, if any)
    ///     begins in the byte stream; used to cut the stream into access units exactly.
    /// - Returns: the access unit this NAL unit completed, if it begins a new one.
    public mutating func append<Bytes: Collection<UInt8>>(nalUnit: Bytes, streamOffset: Int) -> AccessUnit? {
        guard let first = nalUnit.first else { return nil }
        guard first & 0x80 == 0 else {
            // Not a NAL unit: garbage between two start codes (FFmpeg skips these too). Report it
            // and go on with the next start code; nothing assembled so far is lost.
            report(H264Error(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: streamOffset,
                             "a \(nalUnit.count)-byte unit with forbidden_zero_bit set was dropped"))
            return nil
        }
        let type = NALUnitHeader(byte: first).nalUnitType
        let decision = boundary.decide(nalUnit, type: type, parameterSets: parameterSets)
        if let problem = decision.problem { report(problem.offset(by: streamOffset)) }
        // A slice whose header cannot be read at all (cut short, garbage) belongs to no picture:
        // it is dropped like garbage; nothing assembled so far is lost.
        if decision.isDamaged { return nil }
        for warning in decision.slice?.diagnostics ?? [] { warn(warning.offset(by: streamOffset)) }
        let completed = decision.startsNew ? close(at: streamOffset) : nil
        boundary.record(decision, type: type)

        // Append the NAL unit in AVCC form.
        AVCC.appendLength(nalUnit.count, lengthSize: 4, to: &data)
        data.append(contentsOf: nalUnit)
        types.append(type)

        if type == .sequenceParameterSet || type == .pictureParameterSet {
            var warnings: [H264Error] = []
            do {
                let change = try parameterSets.store(nalUnit, diagnostics: &warnings)
                if change == .replaced { cachedFormat = nil }
            } catch {
                report(error.offset(by: streamOffset))
            }
            for warning in warnings { warn(warning.offset(by: streamOffset)) }
        }
        return completed
    }

    /// Ends the stream: returns the last access unit, if any NAL units are pending.
    ///
    /// - Parameter streamLength: the total length of the byte stream, so that the last access
    ///   unit's ``AccessUnit/byteCount`` reaches its end; `nil` ends it after its last NAL unit's
    ///   bytes as counted in AVCC form.
    public mutating func finish(streamLength: Int? = nil) -> AccessUnit? {
        guard !types.isEmpty else { return nil }
        return close(at: streamLength ?? (startOffset + data.count))
    }

    private mutating func format(forPPS id: Int) -> FormatDescription? {
        if let cachedFormat, cachedFormat.ppsId == id { return cachedFormat.format }
        guard let format = parameterSets.formatDescription(pictureParameterSetId: id) else { return nil }
        cachedFormat = (id, format)
        return format
    }

    private mutating func close(at offset: Int) -> AccessUnit {
        var format: FormatDescription?
        var changed = false
        if let id = boundary.firstPPSId, let current = self.format(forPPS: id) {
            format = current
            changed = lastFormat != nil && lastFormat != current
            lastFormat = current
        }
        let unit = AccessUnit(data: data, nalUnitTypes: types, streamOffset: startOffset,
                              byteCount: Swift.max(0, offset - startOffset),
                              formatDescription: format, formatChanged: changed)
        data = []
        data.reserveCapacity(unit.data.count)
        types = []
        startOffset = offset
        boundary = AccessUnitBoundary()
        return unit
    }
}

extension AccessUnitAssembler {
    /// Adds a NAL unit handed out by an ``AnnexBStreamReader``.
    ///
    /// - Returns: the access unit this NAL unit completed, if it begins a new one.
    public mutating func append(_ unit: StreamNALUnit) -> AccessUnit? {
        append(nalUnit: unit.bytes, streamOffset: unit.streamOffset)
    }

    /// Cuts a whole Annex-B byte stream into access units that partition it exactly.
    ///
    /// - Parameters:
    ///   - bytes: the Annex-B byte stream.
    ///   - parameterSets: parameter sets known before the stream begins, if any.
    public static func accessUnits(inAnnexB bytes: [UInt8], parameterSets: ParameterSetCache = ParameterSetCache()) -> [AccessUnit] {
        var assembler = AccessUnitAssembler(parameterSets: parameterSets)
        var units: [AccessUnit] = []
        for location in AnnexB.nalUnits(in: bytes) {
            if let unit = assembler.append(nalUnit: bytes[location.range], streamOffset: location.startCodeOffset) {
                units.append(unit)
            }
        }
        if let last = assembler.finish(streamLength: bytes.count) { units.append(last) }
        return units
    }
}
