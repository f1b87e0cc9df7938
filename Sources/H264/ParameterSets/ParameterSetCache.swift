public import MediaCore
/// The sequence and picture parameter sets of a stream, by id, as they arrive in-band or from a
/// configuration record.
///
/// A parameter set that arrives again with identical bytes changes nothing; one whose bytes differ
/// replaces the stored one and is reported as a change — a changed SPS, or a changed PPS, is a
/// format change for the pictures that use it. A PPS is parsed against the SPS it names, so an SPS
/// must arrive before the PPS that refers to it: a PPS naming an unknown SPS is an error. When an
/// SPS is replaced, the PPS that name it are parsed again (their scaling lists depend on the SPS);
/// those that no longer parse are dropped.
public struct ParameterSetCache: Sendable {
    /// What storing a parameter set did (`ParameterSetChange`, shared with H.265's cache).
    public typealias Change = ParameterSetChange

    private var spsBytes: [Int: [UInt8]] = [:]
    private var ppsBytes: [Int: [UInt8]] = [:]

    /// The parsed sequence parameter sets by `seq_parameter_set_id`.
    public private(set) var sequenceParameterSets: [Int: SequenceParameterSet] = [:]

    /// The parsed picture parameter sets by `pic_parameter_set_id`.
    public private(set) var pictureParameterSets: [Int: PictureParameterSet] = [:]

    /// What slice headers need of each PPS and its SPS, by `pic_parameter_set_id`: kept as each
    /// PPS is stored or reparsed, so that a slice header copies no parameter set.
    /// An array indexed by the id (0…255), grown as far as the largest id stored: a lookup is
    /// an index, not a hash.
    private var sliceHeaderFieldsById: [SliceHeader.ParameterSetFields?] = []

    /// Creates an empty cache.
    public init() {}

    /// Creates a cache holding the parameter sets of a configuration record.
    ///
    /// - Throws: the parse errors of the record's parameter sets.
    public init(configurationRecord: AVCDecoderConfigurationRecord) throws(MediaError) {
        for sps in configurationRecord.sequenceParameterSets { try store(sps) }
        for pps in configurationRecord.pictureParameterSets { try store(pps) }
    }

    /// The NAL unit bytes of the SPS with the given id, if stored.
    public func sequenceParameterSetBytes(id: Int) -> [UInt8]? { spsBytes[id] }

    /// The NAL unit bytes of the PPS with the given id, if stored.
    public func pictureParameterSetBytes(id: Int) -> [UInt8]? { ppsBytes[id] }

    /// Stores an SPS or PPS NAL unit (header byte first).
    ///
    /// - Returns: whether the id was new, unchanged or replaced.
    /// - Throws: `MediaError.Code.unexpectedNALUnitType` for other NAL unit types, the parse
    ///   errors of the parameter set, and `MediaError.Code.missingParameterSet` for a PPS
    ///   naming an SPS that is not stored.
    @discardableResult
    public mutating func store<Bytes: Collection<UInt8>>(_ nalUnit: Bytes) throws(MediaError) -> Change {
        var ignored: [MediaError] = []
        return try store(nalUnit, diagnostics: &ignored)
    }

    /// Stores an SPS or PPS NAL unit (header byte first), appending the parameter set's
    /// tolerable problems (``SequenceParameterSet/diagnostics``, ``PictureParameterSet/diagnostics``)
    /// to `diagnostics` when it is new or replaces another (not when it repeats one).
    ///
    /// - Returns: whether the id was new, unchanged or replaced.
    /// - Throws: as ``store(_:)``.
    @discardableResult
    public mutating func store<Bytes: Collection<UInt8>>(_ nalUnit: Bytes, diagnostics: inout [MediaError]) throws(MediaError) -> Change {
        let header = try NALUnitHeader(validating: nalUnit)
        switch header.nalUnitType {
        case .sequenceParameterSet:
            let bytes = Array(nalUnit)
            // A repeat (before every IDR, as senders do) parses to what is stored: not parsed again.
            if spsBytes.values.contains(bytes) { return .unchanged }
            let sps = try SequenceParameterSet(nalUnit: bytes)
            let change = Self.put(bytes, sps, id: sps.seqParameterSetId, warnings: sps.diagnostics,
                                  bytesById: &spsBytes, parsedById: &sequenceParameterSets, diagnostics: &diagnostics)
            if change == .replaced { reparsePictureParameterSets(naming: sps.seqParameterSetId) }
            return change
        case .pictureParameterSet:
            let bytes = Array(nalUnit)
            // Stored PPSs are parsed again whenever their SPS changes, so a repeat of one parses
            // to what is stored.
            if ppsBytes.values.contains(bytes) { return .unchanged }
            let pps = try PictureParameterSet(nalUnit: bytes, sequenceParameterSets: sequenceParameterSets)
            guard sequenceParameterSets[pps.seqParameterSetId] != nil else {
                throw MediaError(.missingParameterSet, field: "seq_parameter_set_id",
                                "PPS \(pps.picParameterSetId) names SPS \(pps.seqParameterSetId), which has not been seen")
            }
            let change = Self.put(bytes, pps, id: pps.picParameterSetId, warnings: pps.diagnostics,
                                  bytesById: &ppsBytes, parsedById: &pictureParameterSets, diagnostics: &diagnostics)
            if change != .unchanged, let sps = sequenceParameterSets[pps.seqParameterSetId] {
                setSliceHeaderFields(SliceHeader.ParameterSetFields(pps: pps, sps: sps), id: pps.picParameterSetId)
            }
            return change
        default:
            throw MediaError(.unexpectedNALUnitType, field: "nal_unit_type", byteOffset: 0,
                            "NAL unit type \(header.nalUnitType.rawValue) is not a parameter set")
        }
    }

    /// Stores a parsed parameter set and its bytes under `id` unless the same bytes are there
    /// already (then nothing changes and its warnings are not repeated).
    private static func put<Parsed>(_ bytes: [UInt8], _ parsed: Parsed, id: Int, warnings: [MediaError],
                                    bytesById: inout [Int: [UInt8]], parsedById: inout [Int: Parsed],
                                    diagnostics: inout [MediaError]) -> Change {
        let previous = bytesById[id]
        if previous == bytes { return .unchanged }
        diagnostics += warnings
        bytesById[id] = bytes
        parsedById[id] = parsed
        return previous == nil ? .added : .replaced
    }

    private mutating func reparsePictureParameterSets(naming spsId: Int) {
        for (id, pps) in pictureParameterSets where pps.seqParameterSetId == spsId {
            if let bytes = ppsBytes[id],
               let reparsed = try? PictureParameterSet(nalUnit: bytes, sequenceParameterSets: sequenceParameterSets) {
                pictureParameterSets[id] = reparsed
                setSliceHeaderFields(sequenceParameterSets[spsId].map { SliceHeader.ParameterSetFields(pps: reparsed, sps: $0) }, id: id)
            } else {
                pictureParameterSets[id] = nil
                ppsBytes[id] = nil
                setSliceHeaderFields(nil, id: id)
            }
        }
    }

    private mutating func setSliceHeaderFields(_ fields: SliceHeader.ParameterSetFields?, id: Int) {
        guard id >= 0 else { return }
        if id >= sliceHeaderFieldsById.count {
            guard fields != nil else { return }
            sliceHeaderFieldsById += repeatElement(nil, count: id + 1 - sliceHeaderFieldsById.count)
        }
        sliceHeaderFieldsById[id] = fields
    }

    /// Removes every stored parameter set.
    public mutating func removeAll() {
        spsBytes.removeAll()
        ppsBytes.removeAll()
        sequenceParameterSets.removeAll()
        pictureParameterSets.removeAll()
        sliceHeaderFieldsById.removeAll()
    }

    /// What a slice header using PPS `pictureParameterSetId` needs of that PPS and its SPS.
    ///
    /// - Throws: `MediaError.Code.missingParameterSet` when the PPS or its SPS is unknown.
    package func sliceHeaderFields(pictureParameterSetId: Int) throws(MediaError) -> SliceHeader.ParameterSetFields {
        if sliceHeaderFieldsById.indices.contains(pictureParameterSetId), let fields = sliceHeaderFieldsById[pictureParameterSetId] {
            return fields
        }
        return try SliceHeader.ParameterSetFields(pictureParameterSetId: pictureParameterSetId,
                                                   pictureParameterSets: pictureParameterSets,
                                                   sequenceParameterSets: sequenceParameterSets)
    }

    /// The parameter sets a picture using PPS `pictureParameterSetId` activates: the PPS and the
    /// SPS it names, parsed, or `nil` when either is missing.
    public func activeParameterSets(pictureParameterSetId: Int) -> (sps: SequenceParameterSet, pps: PictureParameterSet)? {
        guard let pps = pictureParameterSets[pictureParameterSetId],
              let sps = sequenceParameterSets[pps.seqParameterSetId] else { return nil }
        return (sps, pps)
    }

    /// The format description of pictures using PPS `pictureParameterSetId`: that PPS and the SPS
    /// it names, or `nil` when either is missing.
    public func formatDescription(pictureParameterSetId: Int, nalUnitLengthSize: Int = 4) -> FormatDescription? {
        guard let pps = pictureParameterSets[pictureParameterSetId],
              let sps = spsBytes[pps.seqParameterSetId], let ppsData = ppsBytes[pictureParameterSetId] else { return nil }
        return try? FormatDescription(sequenceParameterSets: [sps], pictureParameterSets: [ppsData],
                                      nalUnitLengthSize: nalUnitLengthSize)
    }
}
