import H264

/// The diagnostics of an inspection, in stream order, collected after each NAL unit an
/// assembler took: its skipped units each time, each distinct warning once.
struct InspectionDiagnostics {
    private(set) var all: [StreamInspection.Diagnostic] = []
    private var seenWarnings = Set<H264Error>()
    private var errorsBefore = 0
    private var warningsBefore = 0

    /// Notes the assembler's counts before it takes the next NAL unit.
    mutating func before(_ assembler: some AccessUnitAssembling) {
        errorsBefore = assembler.errorCount
        warningsBefore = assembler.warningCount
    }

    /// Adds what the assembler reported since ``before(_:)``: it concerns the NAL unit whose
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
