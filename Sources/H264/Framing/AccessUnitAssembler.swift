public import MediaCore
/// Groups NAL units into access units (clauses 7.4.1.2.3 and 7.4.1.2.4).
///
/// Where one access unit ends and the next begins is decided by one rule, shared with the raw
/// AVCC stream conversion (`AnnexB.fromAVCCStream(_:lengthSize:parameterSets:startCodes:)`):
/// a new access unit begins, once the current one holds a coded picture, with an access unit
/// delimiter, SPS, PPS, SEI or NAL unit types 14…18, or with the first VCL NAL unit of a new
/// primary coded picture (clause 7.4.1.2.4; a slice whose parameter sets are unknown falls back
/// to FFmpeg's rule, `first_mb_in_slice` not increasing). End of sequence and end of stream stay
/// with the access unit before them; redundant coded pictures stay with their primary picture.
///
/// A unit whose `forbidden_zero_bit` is set is not a NAL unit (garbage between start codes): it is
/// dropped and reported as `MediaError.Code.forbiddenZeroBit`, and assembly goes on with the
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
public struct AccessUnitAssembler: Sendable, AccessUnitAssembling {
    /// The parameter sets seen so far.
    public var parameterSets: ParameterSetCache { tracker.parameterSets }
    /// How many problems were met (damaged units skipped, malformed parameter sets, slices with
    /// unknown parameter sets).
    public var errorCount: Int { tracker.errorCount }
    /// The most recent problems, oldest first (at most ``recentErrorLimit``). A reader that
    /// wants every one compares ``errorCount`` before and after each append.
    public var recentErrors: [MediaError] { tracker.recentErrors }
    /// How many tolerable problems were met: values out of range that were kept (the
    /// ``SequenceParameterSet/diagnostics`` of each new or changed parameter set, and of slice
    /// headers). The stream is read as if they were in range.
    public var warningCount: Int { tracker.warningCount }
    /// The most recent tolerable problems, oldest first (at most ``recentErrorLimit``), each
    /// with its NAL unit's stream offset as `byteOffset` and its bit offset in that NAL unit.
    public var recentWarnings: [MediaError] { tracker.recentWarnings }
    /// How many problems ``recentErrors`` and ``recentWarnings`` keep.
    public static let recentErrorLimit = ProblemLog.recentLimit

    private var tracker: AccessUnitTracker
    private var data: [UInt8] = []
    /// Where the length field of the NAL unit being written in pieces
    /// (``beginNALUnit(header:leading:streamOffset:)``) lies in `data`; -1 when none is.
    private var openLengthOffset = -1

    /// Creates an assembler, optionally knowing parameter sets already (e.g. from an avcC).
    public init(parameterSets: ParameterSetCache = ParameterSetCache()) {
        tracker = AccessUnitTracker(parameterSets: parameterSets)
    }

    /// Adds the next NAL unit of the stream.
    ///
    /// - Parameters:
    ///   - nalUnit: the NAL unit, header byte first, without start code or length prefix.
    ///   - streamOffset: where the NAL unit's start code (with its leading zero byte, if any)
    ///     begins in the byte stream; used to cut the stream into access units exactly.
    /// - Returns: the access unit this NAL unit completed, if it begins a new one.
    public mutating func append<Bytes: Collection<UInt8>>(nalUnit: Bytes, streamOffset: Int) -> AccessUnit? {
        // A NAL unit still being written in pieces ends where it came to.
        if openLengthOffset >= 0 { endNALUnit() }
        guard case .placed(let closed) = tracker.place(nalUnit, streamOffset: streamOffset) else { return nil }
        var completed: AccessUnit?
        if let closed { completed = package(closed) }
        // Append the NAL unit in AVCC form.
        AVCC.appendLength(nalUnit.count, lengthSize: 4, to: &data)
        data.append(contentsOf: nalUnit)
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
    package mutating func beginNALUnit(header: UInt8, leading: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Bool {
        guard openLengthOffset < 0, leading.count >= Self.leadingByteCount else { return false }
        guard tracker.beginPieces(header: header, leading: leading, streamOffset: streamOffset) else { return false }
        openLengthOffset = data.count
        AVCC.appendLength(0, lengthSize: 4, to: &data)
        data.append(header)
        data.append(contentsOf: leading)
        return true
    }

    /// How many payload bytes after the header byte ``beginNALUnit(header:leading:streamOffset:)``
    /// needs: enough for ``SliceHeader/maximumEncodedSize`` bytes of RBSP even when every third
    /// byte is an emulation prevention byte.
    package static let leadingByteCount = 2 * SliceHeader.maximumEncodedSize

    /// Adds the next piece of the NAL unit begun with ``beginNALUnit(header:leading:streamOffset:)``.
    package mutating func appendToNALUnit(_ bytes: UnsafeBufferPointer<UInt8>) {
        data.append(contentsOf: bytes)
    }

    /// Ends the NAL unit begun with ``beginNALUnit(header:leading:streamOffset:)``: writes its
    /// length and reports what the boundary rule found, as ``append(nalUnit:streamOffset:)``
    /// would have.
    package mutating func endNALUnit() {
        guard openLengthOffset >= 0 else { return }
        AVCC.writeLength(data.count - openLengthOffset - 4, lengthSize: 4, in: &data, at: openLengthOffset)
        openLengthOffset = -1
        tracker.endPieces()
    }

    /// Drops the access unit being assembled, without handing it out (a receiver that lost
    /// part of it): the NAL unit begun with ``beginNALUnit(header:leading:streamOffset:)``, if
    /// one is open, is dropped first, as if it had never begun; the rest goes as with
    /// ``finish(streamLength:)``.
    package mutating func dropAccessUnit() {
        if openLengthOffset >= 0 {
            data.removeSubrange(openLengthOffset...)
            openLengthOffset = -1
            tracker.dropPieces()
        }
        _ = finish()
    }

    /// Ends the stream: returns the last access unit, if any NAL units are pending.
    ///
    /// - Parameter streamLength: the total length of the byte stream, so that the last access
    ///   unit's ``AccessUnit/byteCount`` reaches its end; `nil` ends it after its last NAL unit's
    ///   bytes as counted in AVCC form.
    public mutating func finish(streamLength: Int? = nil) -> AccessUnit? {
        guard !tracker.isEmpty else { return nil }
        // A NAL unit still being written goes with its access unit as far as it came.
        if openLengthOffset >= 0 { endNALUnit() }
        return package(tracker.close(at: streamLength ?? (tracker.startOffset + data.count)))
    }

    /// The access unit of `closed` with the bytes gathered for it; starts the next one's.
    private mutating func package(_ closed: AccessUnitTracker.Closed) -> AccessUnit {
        let unit = AccessUnit(data: data, nalUnitTypes: closed.nalUnitTypes, streamOffset: closed.streamOffset,
                              byteCount: closed.byteCount, formatDescription: closed.formatDescription,
                              formatChanged: closed.formatChanged)
        data = []
        data.reserveCapacity(unit.data.count)
        return unit
    }
}

extension AccessUnitAssembler {
    /// Adds a NAL unit handed out by an `AnnexBStreamReader`.
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
        return assembler.assembleAccessUnits(inAnnexB: bytes)
    }
}
