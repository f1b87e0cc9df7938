public import H264
public import HEVC
import MediaCore

/// Received access units as an Annex-B byte stream a player can start: nothing before the first
/// IDR, and each IDR preceded by its SPS and PPS (from the stream, else from the session's
/// description, e.g. an SDP's `sprop-parameter-sets`). What `h264 receive -o FILE.h264`
/// writes; pure byte work, the caller writes the bytes. H.265 the same way: nothing before the
/// first IRAP picture, and each IRAP picture that carries no SPS preceded by the description's
/// VPS, SPS and PPS (`sprop-vps/sps/pps`).
public struct ReceivedAnnexBWriter: Sendable {
    /// The parameter sets for access units that carry none (nil: the stream's only).
    public let parameterSets: FormatDescription?
    /// Access units taken (from the first IDR on).
    public private(set) var written = 0
    /// Access units before the first IDR, skipped.
    public var skipped: Int { gate.skippedFrames }
    /// Closed until the first random access point.
    private var gate = KeyframeGate()

    /// A writer that has taken nothing yet.
    ///
    /// - Parameter parameterSets: the format of the session's description, for access units
    ///   without their own.
    public init(parameterSets: FormatDescription?) {
        self.parameterSets = parameterSets
        hevcParameterSets = []
    }

    /// The H.265 parameter sets (VPS, SPS, PPS NAL units) for IRAP pictures that carry none;
    /// replaced when the stream announces new ones out of band (an RTMP `hvc1` sequence header).
    public var hevcParameterSets: [[UInt8]]

    /// A writer of H.265 access units that has taken nothing yet.
    ///
    /// - Parameter hevcParameterSets: the VPS, SPS and PPS of the session's description, for
    ///   IRAP pictures without their own.
    public init(hevcParameterSets: [[UInt8]]) {
        parameterSets = nil
        self.hevcParameterSets = hevcParameterSets
    }

    /// Takes the next H.265 access unit: false (and counted in ``skipped``) before the first
    /// IRAP picture.
    ///
    /// - Parameter unit: the access unit, in decoding order.
    /// - Returns: whether it is written (and counted in ``written``).
    public mutating func take(_ unit: HEVCAccessUnit) -> Bool { take(randomAccess: unit.isIRAP) }

    /// The Annex-B bytes of an H.265 `unit` (4-byte HVCC lengths in), the description's VPS,
    /// SPS and PPS before an IRAP picture that carries no SPS.
    ///
    /// - Parameter unit: an access unit ``take(_:)-(HEVCAccessUnit)`` accepted.
    /// - Returns: its Annex-B bytes.
    /// - Throws: an `MediaError` for a unit whose lengths do not frame it.
    public func annexB(_ unit: HEVCAccessUnit) throws(MediaError) -> [UInt8] {
        let prefix = unit.isIRAP && !unit.nalUnitTypes.contains(.sequenceParameterSet) ? hevcParameterSets : []
        return try AnnexB.fromAVCC(AVCC.data(nalUnits: prefix), lengthSize: 4) + AnnexB.fromAVCC(unit.data, lengthSize: 4)
    }

    /// A writer of frames of either codec that has taken nothing yet.
    ///
    /// - Parameter format: the format of the session's description (an SDP's parameter sets),
    ///   for keyframes whose own format is not yet known; nil: the frames' own.
    public init(format: VideoFormatDescription?) {
        parameterSets = format?.h264
        hevcParameterSets = format?.hevc?.parameterSets ?? []
    }

    /// Takes the next frame: false (and counted in ``skipped``) before the first keyframe;
    /// false for an audio frame, which an elementary video stream leaves out (not counted).
    ///
    /// - Parameter frame: the frame, in decoding order.
    /// - Returns: whether it is written (and counted in ``written``).
    public mutating func take(_ frame: CompressedFrame) -> Bool {
        guard frame.videoFormat != nil else { return false }
        return take(randomAccess: frame.isKeyframe)
    }

    /// The Annex-B bytes of `frame`, of either codec (4-byte lengths in): an H.264 IDR preceded
    /// by its format's SPS and PPS unless it carries its own, an H.265 IRAP picture that carries
    /// no SPS by its format's VPS, SPS and PPS.
    ///
    /// - Parameter frame: a frame ``take(_:)-(CompressedFrame)`` accepted.
    /// - Returns: its Annex-B bytes; none for an audio frame.
    /// - Throws: an `MediaError` for a frame whose lengths do not frame it.
    public func annexB(_ frame: CompressedFrame) throws(MediaError) -> [UInt8] {
        guard frame.videoFormat != nil else { return [] }
        if let record = frame.videoFormat?.hevc {
            let unit = HEVCAccessUnit(frame)
            let prefix = unit.isIRAP && !unit.nalUnitTypes.contains(.sequenceParameterSet) ? record.parameterSets : []
            return try AnnexB.fromAVCC(AVCC.data(nalUnits: prefix), lengthSize: 4) + AnnexB.fromAVCC(unit.data, lengthSize: 4)
        }
        let record = frame.videoFormat?.h264?.configurationRecord ?? parameterSets?.configurationRecord
        return try AnnexB.fromAVCC(frame.data, lengthSize: 4, parameterSets: record)
    }

    /// Takes the next access unit: false (and counted in ``skipped``) before the first IDR.
    ///
    /// - Parameter unit: the access unit, in decoding order.
    /// - Returns: whether it is written (and counted in ``written``).
    public mutating func take(_ unit: AccessUnit) -> Bool { take(randomAccess: unit.isIDR) }

    /// Counts the next access unit: skipped until the first random access point (`KeyframeGate`).
    private mutating func take(randomAccess: Bool) -> Bool {
        guard gate.admit(isKeyframe: randomAccess) else { return false }
        written += 1
        return true
    }

    /// The Annex-B bytes of `unit` (4-byte AVCC lengths in), SPS and PPS before an IDR.
    ///
    /// - Parameter unit: an access unit ``take(_:)-(AccessUnit)`` accepted.
    /// - Returns: its Annex-B bytes.
    /// - Throws: an `MediaError` for a unit whose lengths do not frame it.
    public func annexB(_ unit: AccessUnit) throws(MediaError) -> [UInt8] {
        let record = unit.formatDescription?.configurationRecord ?? parameterSets?.configurationRecord
        return try AnnexB.fromAVCC(unit.data, lengthSize: 4, parameterSets: record)
    }
}
