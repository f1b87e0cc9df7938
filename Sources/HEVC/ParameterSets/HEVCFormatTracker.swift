public import MediaCore

/// The `hvcC` of a live H.265 stream as its access units come (a camera, a publisher, a file):
/// what a relay hands its viewers as the stream's `VideoFormatDescription`, and when it
/// changes. Sans-I/O.
///
/// It starts from a known record (an SDP's `sprop-vps/sps/pps`) or none; each access unit that
/// carries a VPS, SPS or PPS of layer 0 stores it (`HEVCParameterSetCache`), and when one is new
/// or its bytes differ the record is built again from every parameter set known. A parameter
/// set that does not parse is left out (the stored one stays); without an SPS there is no
/// record.
package struct HEVCFormatTracker: Sendable {
    private var cache = HEVCParameterSetCache()
    /// The stream's record so far; nil until an SPS is known.
    package private(set) var configuration: HEVCDecoderConfigurationRecord?

    /// A tracker that knows `configuration`'s parameter sets (nil: none yet).
    package init(configuration: HEVCDecoderConfigurationRecord? = nil) {
        for unit in configuration?.nalUnits ?? [] { _ = try? cache.store(unit) }
        self.configuration = configuration
    }

    /// Takes the parameter sets `unit` carries.
    ///
    /// - Returns: the stream's record after them (nil while no SPS is known).
    package mutating func take(_ unit: HEVCAccessUnit) -> HEVCDecoderConfigurationRecord? {
        guard unit.nalUnitTypes.contains(where: \.isParameterSet) else { return configuration }
        var changed = false
        for nal in unit.nalUnits where nal.count >= HEVCNALUnitHeader.byteCount {
            let header = HEVCNALUnitHeader(nal[nal.startIndex], nal[nal.startIndex + 1])
            guard header.nalUnitType.isParameterSet, header.nuhLayerId == 0 else { continue }
            if let stored = try? cache.store(nal), stored.change != .unchanged { changed = true }
        }
        if changed || configuration == nil, let record = try? HEVCDecoderConfigurationRecord(parameterSets: cache.nalUnits) {
            configuration = record
        }
        return configuration
    }
}
