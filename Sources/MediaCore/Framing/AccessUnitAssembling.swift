/// What cuts NAL units into access units, for either codec: `AccessUnitAssembler` here and the
/// H.265 assembler of the `HEVC` module. The one loop that feeds a whole Annex-B stream to one
/// (``assembleAccessUnits(inAnnexB:)``) serves both.
package protocol AccessUnitAssembling {
    /// The access unit the assembler hands out.
    associatedtype Unit

    /// Adds the next NAL unit (header first) whose start code begins at `streamOffset`; returns
    /// the access unit it completed, if any.
    mutating func append<Bytes: Collection<UInt8>>(nalUnit: Bytes, streamOffset: Int) -> Unit?

    /// Ends the stream of `streamLength` bytes: returns the last access unit, if any.
    mutating func finish(streamLength: Int?) -> Unit?

    /// Damaged units reported so far.
    var errorCount: Int { get }
    /// The most recent damaged units' errors.
    var recentErrors: [MediaError] { get }
    /// Tolerable values reported so far.
    var warningCount: Int { get }
    /// The most recent warnings.
    var recentWarnings: [MediaError] { get }
}

extension AccessUnitAssembling {
    /// Cuts a whole Annex-B byte stream into access units that partition it exactly.
    package mutating func assembleAccessUnits(inAnnexB bytes: [UInt8]) -> [Unit] {
        var units: [Unit] = []
        for location in AnnexB.nalUnits(in: bytes) {
            if let unit = append(nalUnit: bytes[location.range], streamOffset: location.startCodeOffset) { units.append(unit) }
        }
        if let last = finish(streamLength: bytes.count) { units.append(last) }
        return units
    }
}
