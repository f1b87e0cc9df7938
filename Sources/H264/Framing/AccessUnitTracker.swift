import MediaCore
/// What an access-unit assembler knows of the stream apart from the bytes it keeps: the boundary
/// rule's state, the parameter sets, the problems met, and the NAL unit types, stream offset and
/// format of the access unit being assembled.
///
/// One tracker serves both ways of keeping the bytes: ``AccessUnitAssembler`` copies them into
/// one AVCC array, `AccessUnitViewAssembler` refers to the received packets that hold them. Both ask
/// it where each NAL unit goes and write the bytes themselves, so the rules (clauses 7.4.1.2.3
/// and 7.4.1.2.4, damaged units, parameter-set storage, problem reports) stay in one place.
package struct AccessUnitTracker: Sendable {
    /// The parameter sets seen so far.
    package private(set) var parameterSets: ParameterSetCache
    /// The problems met (``AccessUnitAssembler/errorCount`` and the rest).
    package private(set) var problems = ProblemLog()
    /// See ``AccessUnitAssembler/errorCount``.
    package var errorCount: Int { problems.errorCount }
    /// See ``AccessUnitAssembler/recentErrors``.
    package var recentErrors: [MediaError] { problems.recentErrors }
    /// See ``AccessUnitAssembler/warningCount``.
    package var warningCount: Int { problems.warningCount }
    /// See ``AccessUnitAssembler/recentWarnings``.
    package var recentWarnings: [MediaError] { problems.recentWarnings }
    /// The types of the access unit's NAL units so far, in order (kept only when
    /// ``handsOutTypes``).
    package private(set) var types: [NALUnitType] = []
    /// How many NAL units the access unit holds so far.
    private var nalUnitCount = 0
    /// Where the access unit being assembled begins in the byte stream.
    package private(set) var startOffset = 0

    private var boundary = AccessUnitBoundary()
    private var lastFormat: FormatDescription?
    private var cachedFormat: (ppsId: Int, format: FormatDescription)?
    /// The stream offset of the NAL unit arriving in pieces, and what the boundary rule found
    /// about it (reported when it ends); kept in plain stored properties so that each piece
    /// costs no copy of a decision.
    private var openStreamOffset = 0
    private var openProblem: MediaError?
    private var openWarnings: [MediaError] = []

    /// What is known of an access unit when it is complete, apart from its bytes.
    package struct Closed {
        /// Empty unless ``handsOutTypes``.
        package var nalUnitTypes: [NALUnitType]
        package var streamOffset: Int
        package var byteCount: Int
        package var formatDescription: FormatDescription?
        package var formatChanged: Bool
    }

    /// Where a whole NAL unit went.
    package enum Placement {
        /// Not a NAL unit, or a slice whose header cannot be read: reported, not kept.
        case dropped
        /// Kept; when it begins a new access unit, `closed` is the one before it, whose bytes
        /// the caller hands out before writing this NAL unit's.
        case placed(closed: Closed?)
    }

    /// Whether ``Closed/nalUnitTypes`` is filled: false for assemblers whose access units read
    /// their types from their bytes, so that no list is kept, handed out and allocated again
    /// for each access unit.
    package let handsOutTypes: Bool

    package init(parameterSets: ParameterSetCache, handsOutTypes: Bool = true) {
        self.parameterSets = parameterSets
        self.handsOutTypes = handsOutTypes
    }

    /// True while the access unit being assembled holds no NAL unit.
    package var isEmpty: Bool { nalUnitCount == 0 }

    /// Decides where `nalUnit` (a whole NAL unit, header byte first) goes, reports what the rule
    /// found, and stores it when it is a parameter set.
    package mutating func place(_ nalUnit: some Collection<UInt8>, streamOffset: Int) -> Placement {
        guard let first = nalUnit.first else { return .dropped }
        guard first & 0x80 == 0 else {
            // Not a NAL unit: garbage between two start codes (FFmpeg skips these too). Report it
            // and go on with the next start code; nothing assembled so far is lost.
            report(MediaError(.forbiddenZeroBit, field: "forbidden_zero_bit", byteOffset: streamOffset,
                             "a \(nalUnit.count)-byte unit with forbidden_zero_bit set was dropped"))
            return .dropped
        }
        let type = NALUnitHeader(byte: first).nalUnitType
        let decision = boundary.decide(nalUnit, type: type, parameterSets: parameterSets)
        if let problem = decision.problem { report(problem.offset(by: streamOffset)) }
        // A slice whose header cannot be read at all (cut short, garbage) belongs to no picture:
        // it is dropped like garbage; nothing assembled so far is lost.
        if decision.isDamaged { return .dropped }
        for warning in decision.diagnostics { warn(warning.offset(by: streamOffset)) }
        let closed = decision.startsNew ? close(at: streamOffset) : nil
        boundary.record(decision, type: type)
        if handsOutTypes { types.append(type) }
        nalUnitCount += 1
        if type == .sequenceParameterSet || type == .pictureParameterSet {
            var warnings: [MediaError] = []
            do {
                let change = try parameterSets.store(nalUnit, diagnostics: &warnings)
                if change == .replaced { cachedFormat = nil }
            } catch {
                report(error.offset(by: streamOffset))
            }
            for warning in warnings { warn(warning.offset(by: streamOffset)) }
        }
        return .placed(closed: closed)
    }

    /// Decides on a NAL unit whose bytes arrive in pieces from its header byte, `header`, and the
    /// first bytes after it, `leading` (at least ``AccessUnitAssembler/leadingByteCount`` of
    /// them): true when it joins the access unit being assembled exactly as
    /// ``place(_:streamOffset:)`` would place it whole. It does not when it would begin a new
    /// access unit, is damaged or not a NAL unit, or is a parameter set (stored whole); then
    /// nothing is recorded. Follow a true with ``endPieces()`` or ``dropPieces()``.
    package mutating func beginPieces(header: UInt8, leading: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Bool {
        guard header & 0x80 == 0 else { return false }
        let type = NALUnitHeader(byte: header).nalUnitType
        guard type != .sequenceParameterSet && type != .pictureParameterSet else { return false }
        let decision = boundary.decide(header: header, payload: leading, type: type, parameterSets: parameterSets)
        guard !decision.isDamaged && !decision.startsNew else { return false }
        openStreamOffset = streamOffset
        openProblem = decision.problem
        if !decision.diagnostics.isEmpty { openWarnings = decision.diagnostics }
        boundary.record(decision, type: type)
        if handsOutTypes { types.append(type) }
        nalUnitCount += 1
        return true
    }

    /// Ends the NAL unit begun with ``beginPieces(header:leading:streamOffset:)``: reports what the boundary
    /// rule found, as ``place(_:streamOffset:)`` would have.
    package mutating func endPieces() {
        if let problem = openProblem { report(problem.offset(by: openStreamOffset)); openProblem = nil }
        if !openWarnings.isEmpty {
            for warning in openWarnings { warn(warning.offset(by: openStreamOffset)) }
            openWarnings = []
        }
    }

    /// Forgets the NAL unit begun with ``beginPieces(header:leading:streamOffset:)``, as if it had never
    /// begun.
    package mutating func dropPieces() {
        if handsOutTypes { types.removeLast() }
        nalUnitCount -= 1
        openProblem = nil
        openWarnings = []
        // Only the open NAL unit was recorded: the boundary state goes back to an empty access
        // unit's, as before it began.
        if nalUnitCount == 0 { boundary = AccessUnitBoundary() }
    }

    /// Ends the access unit being assembled at `offset` in the byte stream and starts the next.
    package mutating func close(at offset: Int) -> Closed {
        var format: FormatDescription?
        var changed = false
        if let id = boundary.firstPPSId, let current = self.format(forPPS: id) {
            format = current
            changed = lastFormat != nil && lastFormat != current
            lastFormat = current
        }
        let closed = Closed(nalUnitTypes: handsOutTypes ? types : [], streamOffset: startOffset,
                            byteCount: Swift.max(0, offset - startOffset), formatDescription: format, formatChanged: changed)
        if handsOutTypes { types = [] }
        nalUnitCount = 0
        startOffset = offset
        boundary = AccessUnitBoundary()
        return closed
    }

    private mutating func format(forPPS id: Int) -> FormatDescription? {
        if let cachedFormat, cachedFormat.ppsId == id { return cachedFormat.format }
        guard let format = parameterSets.formatDescription(pictureParameterSetId: id) else { return nil }
        cachedFormat = (id, format)
        return format
    }

    private mutating func warn(_ warning: MediaError) { problems.warn(warning) }

    private mutating func report(_ error: MediaError) { problems.report(error) }
}
