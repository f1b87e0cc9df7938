public import H264

/// The diagnostics of an inspection, in stream order, collected after each NAL unit an
/// assembler took: its skipped units each time, each distinct warning once.
struct InspectionDiagnostics {
    private(set) var all: [StreamInspection.Diagnostic] = []
    private var seenWarnings = Set<MediaError>()
    private var errorsBefore = 0
    private var warningsBefore = 0

    /// Notes the assembler's counts before it takes the next NAL unit.
    mutating func before(_ assembler: some AccessUnitAssembling) {
        errorsBefore = assembler.errorCount
        warningsBefore = assembler.warningCount
    }

    /// Adds what the assembler reported since `before(_:)`: it concerns the NAL unit whose
    /// header byte is at `headerOffset` (bit offsets count from it).
    mutating func after(_ assembler: some AccessUnitAssembling, headerOffset: Int) {
        for var error in assembler.recentErrors.suffix(assembler.errorCount - errorsBefore) {
            error.byteOffset = headerOffset
            all.append(StreamInspection.Diagnostic(kind: .skipped, error: error))
        }
        for var warning in assembler.recentWarnings.suffix(assembler.warningCount - warningsBefore) {
            warning.byteOffset = nil
            guard seenWarnings.insert(warning).inserted else { continue }
            warning.byteOffset = headerOffset
            all.append(StreamInspection.Diagnostic(kind: .warning, error: warning))
        }
    }
}

extension InspectionDiagnostics {
    /// The one pass both inspections (``StreamInspection``, ``HEVCStreamInspection``) make over
    /// a stream's NAL units, in stream order: each goes to `assembler`, whose access units are
    /// collected and whose reports become that unit's diagnostics, and to `each` (for its row
    /// and its parameter set dump).
    ///
    /// - Returns: the access units (the last one at the end of `bytes` included) and the
    ///   diagnostics.
    static func inspect<Assembler: AccessUnitAssembling>(
        _ bytes: [UInt8], units: some Sequence<(offset: Int, range: Range<Int>)>, assembler: inout Assembler,
        each: (_ nalUnit: ArraySlice<UInt8>, _ offset: Int, _ range: Range<Int>) -> Void
    ) -> (accessUnits: [Assembler.Unit], diagnostics: [StreamInspection.Diagnostic]) {
        var collected = InspectionDiagnostics(), accessUnits: [Assembler.Unit] = []
        for unit in units {
            let nal = bytes[unit.range]
            collected.before(assembler)
            if let completed = assembler.append(nalUnit: nal, streamOffset: unit.offset) {
                accessUnits.append(completed)
            }
            each(nal, unit.offset, unit.range)
            collected.after(assembler, headerOffset: unit.range.lowerBound)
        }
        if let last = assembler.finish(streamLength: bytes.count) {
            accessUnits.append(last)
        }
        return (accessUnits, collected.all)
    }
}
