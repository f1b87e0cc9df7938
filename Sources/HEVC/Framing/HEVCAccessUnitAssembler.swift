public import MediaCore

/// Groups H.265 NAL units into access units (clause 7.4.2.4.4), as `AccessUnitAssembler`
/// does for H.264, with the same tolerant reading.
///
/// Where one access unit ends and the next begins is decided by one rule (see the type
/// `HEVCAccessUnitBoundary`): a slice segment with `first_slice_segment_in_pic_flag`, or an
/// AUD, VPS, SPS, PPS, prefix SEI or type 41…44 / 48…55 NAL unit after a picture; units of
/// layers above 0 are never cut at.
///
/// Problems never stop assembly; they come in two kinds, kept apart:
/// - damaged: a unit shorter than its header, with `forbidden_zero_bit` set or
///   `nuh_temporal_id_plus1` 0, or a slice segment with no byte after its header, is reported
///   and skipped (it is in no access unit); a parameter set that does not parse stays in its
///   access unit's data but is not stored. Counted in ``errorCount``, the most recent kept in
///   ``recentErrors``, each with its NAL unit's stream offset as `byteOffset`;
/// - tolerable: a value out of range that does not change how the rest is read, kept — the
///   ``HEVCSequenceParameterSet/diagnostics`` of each new or changed parameter set, counted in
///   ``warningCount``, the most recent kept in ``recentWarnings``.
///
/// Only lost framing is fatal, and that is found before the assembler (by the Annex-B or
/// length-prefix reader, shared with H.264).
public struct HEVCAccessUnitAssembler: Sendable, AccessUnitAssembling {
    /// The parameter sets seen so far.
    public private(set) var parameterSets: HEVCParameterSetCache
    /// How many damaged units and malformed parameter sets were met.
    public var errorCount: Int { problems.errorCount }
    /// The most recent of them, oldest first (at most `AccessUnitAssembler.recentErrorLimit`).
    public var recentErrors: [MediaError] { problems.recentErrors }
    /// How many tolerable problems were met (values out of range that were kept).
    public var warningCount: Int { problems.warningCount }
    /// The most recent of them, oldest first (at most `AccessUnitAssembler.recentErrorLimit`).
    public var recentWarnings: [MediaError] { problems.recentWarnings }

    private var problems = ProblemLog()
    private var boundary = HEVCAccessUnitBoundary()
    private var data: [UInt8] = []
    private var types: [HEVCNALUnitType] = []
    private var startOffset = 0

    /// Creates an assembler, optionally knowing parameter sets already (e.g. from an `hvcC`).
    public init(parameterSets: HEVCParameterSetCache = HEVCParameterSetCache()) {
        self.parameterSets = parameterSets
    }

    /// Adds the next NAL unit of the stream.
    ///
    /// - Parameters:
    ///   - nalUnit: the NAL unit, both header bytes first, without start code or length prefix.
    ///   - streamOffset: where the NAL unit's start code (with its leading zero byte, if any)
    ///     begins in the byte stream; used to cut the stream into access units exactly.
    /// - Returns: the access unit this NAL unit completed, if it begins a new one.
    public mutating func append<Bytes: Collection<UInt8>>(nalUnit: Bytes, streamOffset: Int) -> HEVCAccessUnit? {
        let header: HEVCNALUnitHeader
        do {
            header = try HEVCNALUnitHeader(validating: nalUnit)
        } catch {
            problems.report(error.offset(by: streamOffset))
            return nil
        }
        let payload = nalUnit.dropFirst(HEVCNALUnitHeader.byteCount)
        if HEVCAccessUnitBoundary.hasSliceSegmentHeader(header.nalUnitType) && payload.isEmpty {
            problems.report(MediaError(.truncated, field: "first_slice_segment_in_pic_flag", byteOffset: streamOffset,
                                      bitOffset: 16, "a slice segment with no byte after its header"))
            return nil
        }
        let startsNew = boundary.startsNew(header, firstPayloadByte: payload.first ?? 0)
        var completed: HEVCAccessUnit?
        if startsNew { completed = close(at: streamOffset) }
        boundary.record(header, startsNew: startsNew)
        // Parameter sets of layers above 0 (multi-layer extensions) are carried, not stored: their
        // ids are another layer's.
        if header.nalUnitType.isParameterSet && header.nuhLayerId == 0 {
            do {
                for warning in try parameterSets.store(nalUnit).diagnostics { problems.warn(warning.offset(by: streamOffset)) }
            } catch {
                problems.report(error.offset(by: streamOffset))
            }
        }
        AVCC.appendLength(nalUnit.count, lengthSize: 4, to: &data)
        data.append(contentsOf: nalUnit)
        types.append(header.nalUnitType)
        return completed
    }

    /// Adds a NAL unit handed out by an `AnnexBStreamReader`.
    ///
    /// - Returns: the access unit this NAL unit completed, if it begins a new one.
    public mutating func append(_ unit: StreamNALUnit) -> HEVCAccessUnit? {
        append(nalUnit: unit.bytes, streamOffset: unit.streamOffset)
    }

    /// Ends the stream: returns the last access unit, if any NAL units are pending.
    ///
    /// - Parameter streamLength: the total length of the byte stream, so that the last access
    ///   unit's ``HEVCAccessUnit/byteCount`` reaches its end; `nil` ends it after its last NAL
    ///   unit's bytes as counted in length-prefixed form.
    public mutating func finish(streamLength: Int? = nil) -> HEVCAccessUnit? {
        guard !boundary.isEmpty else { return nil }
        let unit = close(at: streamLength ?? (startOffset + data.count))
        boundary = HEVCAccessUnitBoundary()
        return unit
    }

    /// The access unit gathered so far, ending at stream offset `offset`; starts the next one there.
    private mutating func close(at offset: Int) -> HEVCAccessUnit {
        let unit = HEVCAccessUnit(data: data, nalUnitTypes: types, streamOffset: startOffset, byteCount: offset - startOffset)
        data = []
        data.reserveCapacity(unit.data.count)
        types = []
        startOffset = offset
        return unit
    }

    /// Cuts a whole Annex-B byte stream into access units that partition it exactly.
    ///
    /// - Parameters:
    ///   - bytes: the Annex-B byte stream.
    ///   - parameterSets: parameter sets known before the stream begins, if any.
    public static func accessUnits(inAnnexB bytes: [UInt8], parameterSets: HEVCParameterSetCache = HEVCParameterSetCache()) -> [HEVCAccessUnit] {
        var assembler = HEVCAccessUnitAssembler(parameterSets: parameterSets)
        return assembler.assembleAccessUnits(inAnnexB: bytes)
    }
}
