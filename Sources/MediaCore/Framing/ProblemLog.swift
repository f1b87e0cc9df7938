/// The problems an access-unit assembler met: how many of each kind, and the most recent ones
/// (at most ``recentLimit`` of each). The one record of damaged units
/// and tolerable values behind `AccessUnitAssembler` and the H.265 assembler of the `HEVC`
/// module.
package struct ProblemLog: Sendable {
    /// How many damaged units, malformed parameter sets and unresolvable slices were met.
    package private(set) var errorCount = 0
    /// The most recent of them, oldest first.
    package private(set) var recentErrors: [MediaError] = []
    /// How many tolerable values were kept.
    package private(set) var warningCount = 0
    /// The most recent of them, oldest first.
    package private(set) var recentWarnings: [MediaError] = []

    /// How many of each kind a log keeps (the most recent).
    package static let recentLimit = 16

    /// An empty log.
    package init() {}

    /// Records a tolerable problem (the value was kept).
    package mutating func warn(_ warning: MediaError) {
        warningCount += 1
        if recentWarnings.count == Self.recentLimit { recentWarnings.removeFirst() }
        recentWarnings.append(warning)
    }

    /// Records a damaged unit or a malformed parameter set.
    package mutating func report(_ error: MediaError) {
        errorCount += 1
        if recentErrors.count == Self.recentLimit { recentErrors.removeFirst() }
        recentErrors.append(error)
    }
}
