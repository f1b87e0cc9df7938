public import MediaCore

/// The video, sequence and picture parameter sets of an H.265 stream, by id, as they arrive
/// in-band or from a configuration record.
///
/// A parameter set that arrives again with identical bytes changes nothing; one whose bytes
/// differ replaces the stored one and is reported as `ParameterSetChange.replaced`
/// (the same change values as H.264's `ParameterSetCache`). A PPS is checked against the
/// SPS it names when that is known; unlike H.264, reading a PPS does not need it.
public struct HEVCParameterSetCache: Hashable, Sendable {
    private var bytes: [HEVCNALUnitType: [Int: [UInt8]]] = [:]

    /// The parsed video parameter sets by `vps_video_parameter_set_id`.
    public private(set) var videoParameterSets: [Int: HEVCVideoParameterSet] = [:]
    /// The parsed sequence parameter sets by `sps_seq_parameter_set_id`.
    public private(set) var sequenceParameterSets: [Int: HEVCSequenceParameterSet] = [:]
    /// The parsed picture parameter sets by `pps_pic_parameter_set_id`.
    public private(set) var pictureParameterSets: [Int: HEVCPictureParameterSet] = [:]

    /// Creates an empty cache.
    public init() {}

    /// The NAL unit bytes stored for a parameter set type (VPS, SPS or PPS) and id.
    public func nalUnitBytes(type: HEVCNALUnitType, id: Int) -> [UInt8]? { bytes[type]?[id] }

    /// Stores a VPS, SPS or PPS NAL unit (both header bytes first).
    ///
    /// - Returns: whether the id was new, unchanged or replaced, and the parameter set's
    ///   tolerable problems when it was new or replaced (empty when unchanged).
    /// - Throws: `MediaError.Code.unexpectedNALUnitType` for other NAL unit types, and the
    ///   parse errors of the parameter set (nothing is stored then).
    @discardableResult
    public mutating func store(_ nalUnit: some Collection<UInt8>) throws(MediaError) -> (change: ParameterSetChange, diagnostics: [MediaError]) {
        let unit = Array(nalUnit)
        let header = try HEVCNALUnitHeader(validating: unit)
        let type = header.nalUnitType
        let id: Int, diagnostics: [MediaError]
        switch type {
        case .videoParameterSet:
            let vps = try HEVCVideoParameterSet(nalUnit: unit)
            (id, diagnostics) = (vps.vpsVideoParameterSetId, vps.diagnostics)
            if bytes[type]?[id] == unit { return (.unchanged, []) }
            videoParameterSets[id] = vps
        case .sequenceParameterSet:
            let sps = try HEVCSequenceParameterSet(nalUnit: unit)
            (id, diagnostics) = (sps.spsSeqParameterSetId, sps.diagnostics)
            if bytes[type]?[id] == unit { return (.unchanged, []) }
            sequenceParameterSets[id] = sps
        case .pictureParameterSet:
            let pps = try HEVCPictureParameterSet(nalUnit: unit, sequenceParameterSets: sequenceParameterSets)
            (id, diagnostics) = (pps.ppsPicParameterSetId, pps.diagnostics)
            if bytes[type]?[id] == unit { return (.unchanged, []) }
            pictureParameterSets[id] = pps
        default:
            throw MediaError(.unexpectedNALUnitType, field: "nal_unit_type", byteOffset: 0, bitOffset: 1,
                            "NAL unit type \(type) is not a parameter set")
        }
        let change: ParameterSetChange = bytes[type]?[id] == nil ? .added : .replaced
        bytes[type, default: [:]][id] = unit
        return (change, diagnostics)
    }

    /// The SPS a picture uses: the one its PPS (`slice_pic_parameter_set_id`) names.
    public func sequenceParameterSet(pictureParameterSetId id: Int) -> HEVCSequenceParameterSet? {
        pictureParameterSets[id].flatMap { sequenceParameterSets[$0.ppsSeqParameterSetId] }
    }
}

extension HEVCParameterSetCache {
    /// The id of a VPS, SPS or PPS NAL unit (`vps_video_parameter_set_id`,
    /// `sps_seq_parameter_set_id` or `pps_pic_parameter_set_id`), or nil when it does not parse.
    static func parameterSetId(of nalUnit: some Collection<UInt8>) -> Int? {
        guard let header = try? HEVCNALUnitHeader(validating: nalUnit) else { return nil }
        switch header.nalUnitType {
        case .videoParameterSet: return (try? HEVCVideoParameterSet(nalUnit: nalUnit))?.vpsVideoParameterSetId
        case .sequenceParameterSet: return (try? HEVCSequenceParameterSet(nalUnit: nalUnit))?.spsSeqParameterSetId
        case .pictureParameterSet: return (try? HEVCPictureParameterSet(nalUnit: nalUnit))?.ppsPicParameterSetId
        default: return nil
        }
    }
}

extension HEVCParameterSetCache {
    /// Every stored NAL unit: the VPSs, then the SPSs, then the PPSs, each kind by id — the
    /// order of an `hvcC`'s arrays.
    public var nalUnits: [[UInt8]] {
        [HEVCNALUnitType.videoParameterSet, .sequenceParameterSet, .pictureParameterSet].flatMap { type in
            (bytes[type] ?? [:]).sorted { $0.key < $1.key }.map(\.value)
        }
    }
}
