import H264
import HEVC

/// The H.265 side of an ``AnnexBFilePlayer``'s reading: the file's bytes into the one H.265
/// stream receiver (access units from the first IRAP picture whose SPS has come), each access
/// unit with a picture given the `hvcC` of the parameter sets so far (`HEVCFormatTracker`) and
/// its places in decoding and presentation order: the output process H.264 uses
/// (`PresentationOrdering`) over `PicOrderCntVal` (`HEVCPictureOrderCounter`, from the first
/// slice segment header), `sps_max_num_reorder_pics` as the depth, IDR and BLA pictures
/// starting afresh. Sans-I/O.
struct HEVCFileReading: Sendable {
    /// An access unit with a picture, its format, and its places in decoding and presentation order.
    struct Placed {
        let unit: HEVCAccessUnit
        let format: HEVCDecoderConfigurationRecord
        let decodeIndex: Int
        let presentationIndex: Int
    }

    private var receiver = HEVCStreamReceiver()
    private var tracker = HEVCFormatTracker()
    private var counter = HEVCPictureOrderCounter()
    private var order = PresentationOrdering<(unit: HEVCAccessUnit, format: HEVCDecoderConfigurationRecord)>()

    /// The frame rate the parameter sets signal: the SPS's VUI timing, else the VPS's.
    var frameRate: Double? {
        (tracker.configuration?.sequenceParameterSet?.frameRate
            ?? receiver.parameterSets.videoParameterSets.values.first?.frameRate)?.framesPerSecond
    }

    /// Takes the next bytes of the file; returns the access units with a picture whose
    /// presentation place is now known, in decoding order.
    mutating func receive(_ chunk: some Collection<UInt8>) -> [Placed] {
        receiver.append(chunk)
        var placed: [Placed] = []
        while let unit = receiver.next() { placed += place(unit) }
        return placed
    }

    /// Ends the file: the access units still held; the next bytes start a new stream (a loop).
    mutating func finish() -> [Placed] {
        var placed: [Placed] = []
        for unit in receiver.finish() { placed += place(unit) }
        receiver = HEVCStreamReceiver()
        counter = HEVCPictureOrderCounter()
        return placed + Self.placed(order.finish())
    }

    /// `unit` in the format of the parameter sets up to it (nothing before an SPS, or without a
    /// picture), into the presentation order.
    private mutating func place(_ unit: HEVCAccessUnit) -> [Placed] {
        if unit.nalUnitTypes.contains(.endOfSequence) { counter.endOfSequence() }
        let taken = tracker.take(unit)
        guard unit.hasPicture, let format = taken else { return [] }
        let parameterSets = receiver.parameterSets
        // The first slice segment header gives the picture order count; one that does not read counts as 0.
        var count = 0, depth: Int?
        if let first = unit.nalUnits.first(where: { $0.count > 2 && HEVCNALUnitHeader($0[$0.startIndex], 0).nalUnitType.isVCL }),
           let header = try? HEVCSliceSegmentHeader(nalUnit: first, parameterSets: parameterSets),
           let sps = parameterSets.sequenceParameterSet(pictureParameterSetId: header.slicePicParameterSetId) {
            count = counter.picOrderCntVal(of: header, sps: sps)
            depth = sps.maxNumReorderPics
        }
        let startsSequence = unit.nalUnitTypes.contains { $0.isIDR || $0.isBLA }
        return Self.placed(order.append((unit, format), startsSequence: startsSequence, reorderDepth: depth, picOrderCount: count))
    }

    private static func placed(_ units: [PresentationOrdering<(unit: HEVCAccessUnit, format: HEVCDecoderConfigurationRecord)>.Placed]) -> [Placed] {
        units.map { Placed(unit: $0.unit.unit, format: $0.unit.format, decodeIndex: $0.decodeIndex, presentationIndex: $0.presentationIndex) }
    }
}
