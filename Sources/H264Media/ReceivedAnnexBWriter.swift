public import H264

/// Received access units as an Annex-B byte stream a player can start: nothing before the first
/// IDR, and each IDR preceded by its SPS and PPS (from the stream, else from the session's
/// description, e.g. an SDP's `sprop-parameter-sets`). What `h264 receive -o FILE.h264`
/// writes; pure byte work, the caller writes the bytes.
public struct ReceivedAnnexBWriter: Sendable {
    /// The parameter sets for access units that carry none (nil: the stream's only).
    public let parameterSets: FormatDescription?
    /// Access units taken (from the first IDR on).
    public private(set) var written = 0
    /// Access units before the first IDR, skipped.
    public private(set) var skipped = 0

    /// A writer that has taken nothing yet.
    ///
    /// - Parameter parameterSets: the format of the session's description, for access units
    ///   without their own.
    public init(parameterSets: FormatDescription?) {
        self.parameterSets = parameterSets
    }

    /// Takes the next access unit: false (and counted in ``skipped``) before the first IDR.
    ///
    /// - Parameter unit: the access unit, in decoding order.
    /// - Returns: whether it is written (and counted in ``written``).
    public mutating func take(_ unit: AccessUnit) -> Bool {
        if written == 0 && !unit.isIDR {
            skipped += 1
            return false
        }
        written += 1
        return true
    }

    /// The Annex-B bytes of `unit` (4-byte AVCC lengths in), SPS and PPS before an IDR.
    ///
    /// - Parameter unit: an access unit ``take(_:)`` accepted.
    /// - Returns: its Annex-B bytes.
    /// - Throws: an `H264Error` for a unit whose lengths do not frame it.
    public func annexB(_ unit: AccessUnit) throws(H264Error) -> [UInt8] {
        let record = unit.formatDescription?.configurationRecord ?? parameterSets?.configurationRecord
        return try AnnexB.fromAVCC(unit.data, lengthSize: 4, parameterSets: record)
    }
}
