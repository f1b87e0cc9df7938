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
    /// Where the length field of the NAL unit being written in pieces
    /// (``beginNALUnit(header:leading:streamOffset:)``) lies in `data`; -1 when none is. Kept in
    /// plain stored properties, with its stream offset and what the boundary rule found (reported
    /// when it ends), so that each fragment costs no copy of a decision or boundary state.
    private var openLengthOffset = -1
    private var openStreamOffset = 0
    private var openProblem: H264Error?
    private var openWarnings: [H264Error] = []

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

    /// Begins a NAL unit whose bytes arrive in pieces (an RTP FU-A), writing it straight into
    /// the access unit: one copy instead of gathering it first and appending it whole.
    ///
    /// The boundary rule decides from the header byte and `leading` (the first piece of the
    /// payload, which must hold at least ``leadingByteCount`` bytes so that the slice header
    /// reads as from the whole NAL unit). It takes the NAL unit only when that changes nothing
    /// against ``append(nalUnit:streamOffset:)`` called at its end: not when it would complete
    /// the access unit before it, is damaged or not a NAL unit, or is a parameter set (stored
    /// whole). Then it returns false, writes nothing, and the caller appends the whole NAL unit
    /// instead. Otherwise the caller adds the rest with ``appendToNALUnit(_:)`` and calls
    /// ``endNALUnit()`` (or ``dropAccessUnit()``) before anything else.
    mutating func beginNALUnit(header: UInt8, leading: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Bool {
        guard openLengthOffset < 0, header & 0x80 == 0, leading.count >= Self.leadingByteCount else { return false }
        let type = NALUnitHeader(byte: header).nalUnitType
        guard type != .sequenceParameterSet && type != .pictureParameterSet else { return false }
        let lengthOffset = data.count
        AVCC.appendLength(0, lengthSize: 4, to: &data)
        data.append(header)
        data.append(contentsOf: leading)
        let decision = boundary.decide(data[(lengthOffset + 4)...], type: type, parameterSets: parameterSets)
        guard !decision.isDamaged && !decision.startsNew else {
            data.removeSubrange(lengthOffset...)
            return false
        }
        openLengthOffset = lengthOffset
        openStreamOffset = streamOffset
        openProblem = decision.problem
        if let diagnostics = decision.slice?.diagnostics, !diagnostics.isEmpty { openWarnings = diagnostics }
        boundary.record(decision, type: type)
        types.append(type)
        return true
    }

    /// How many payload bytes after the header byte ``beginNALUnit(header:leading:streamOffset:)``
    /// needs: enough for ``SliceHeader/maximumEncodedSize`` bytes of RBSP even when every third
    /// byte is an emulation prevention byte.
    static let leadingByteCount = 2 * SliceHeader.maximumEncodedSize

    /// Adds the next piece of the NAL unit begun with ``beginNALUnit(header:leading:streamOffset:)``.
    mutating func appendToNALUnit(_ bytes: UnsafeBufferPointer<UInt8>) {
        data.append(contentsOf: bytes)
    }

    /// Ends the NAL unit begun with ``beginNALUnit(header:leading:streamOffset:)``: writes its
    /// length and reports what the boundary rule found, as ``append(nalUnit:streamOffset:)``
    /// would have.
    mutating func endNALUnit() {
        guard openLengthOffset >= 0 else { return }
        AVCC.writeLength(data.count - openLengthOffset - 4, lengthSize: 4, in: &data, at: openLengthOffset)
        openLengthOffset = -1
        if let problem = openProblem { report(problem.offset(by: openStreamOffset)); openProblem = nil }
        if !openWarnings.isEmpty {
            for warning in openWarnings { warn(warning.offset(by: openStreamOffset)) }
            openWarnings = []
        }
    }

    /// Drops the access unit being assembled, without handing it out (a receiver that lost
    /// part of it): the NAL unit begun with ``beginNALUnit(header:leading:streamOffset:)``, if
    /// one is open, is dropped first, as if it had never begun; the rest goes as with
    /// ``finish(streamLength:)``.
    mutating func dropAccessUnit() {
        if openLengthOffset >= 0 {
            data.removeSubrange(openLengthOffset...)
            types.removeLast()
            openLengthOffset = -1
            openProblem = nil
            openWarnings = []
            // Only the open NAL unit was recorded: the boundary state goes back to an empty
            // access unit's, as before it began.
            if types.isEmpty { boundary = AccessUnitBoundary() }
        }
        _ = finish()
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
        // A NAL unit still being written goes with its access unit as far as it came.
        if openLengthOffset >= 0 { endNALUnit() }
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
