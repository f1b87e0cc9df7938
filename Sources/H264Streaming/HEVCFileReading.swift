import H264
import HEVC

/// The H.265 side of an ``AnnexBFilePlayer``'s reading: the file's bytes into the one H.265
/// stream receiver (access units from the first IRAP picture whose SPS has come), each access
/// unit with a picture given the `hvcC` of the parameter sets so far (`HEVCFormatTracker`).
/// Sans-I/O.
struct HEVCFileReading: Sendable {
    private var receiver = HEVCStreamReceiver()
    private var tracker = HEVCFormatTracker()
    /// The next access unit's place in decoding order, counted across loops.
    var decodeIndex = 0

    /// The frame rate the parameter sets signal: the SPS's VUI timing, else the VPS's.
    var frameRate: Double? {
        (tracker.configuration?.sequenceParameterSet?.frameRate
            ?? receiver.parameterSets.videoParameterSets.values.first?.frameRate)?.framesPerSecond
    }

    /// Takes the next bytes of the file; returns the access units with a picture they completed.
    mutating func receive(_ chunk: some Collection<UInt8>) -> [(unit: HEVCAccessUnit, format: HEVCDecoderConfigurationRecord)] {
        receiver.append(chunk)
        var units: [HEVCAccessUnit] = []
        while let unit = receiver.next() { units.append(unit) }
        return formatted(units)
    }

    /// Ends the file: the access units still held; the next bytes start a new stream (a loop).
    mutating func finish() -> [(unit: HEVCAccessUnit, format: HEVCDecoderConfigurationRecord)] {
        let units = receiver.finish()
        receiver = HEVCStreamReceiver()
        return formatted(units)
    }

    /// `units` with a picture, each in the format of the parameter sets up to it (none before an SPS).
    private mutating func formatted(_ units: [HEVCAccessUnit]) -> [(unit: HEVCAccessUnit, format: HEVCDecoderConfigurationRecord)] {
        units.compactMap { unit in
            let format = tracker.take(unit)
            guard unit.hasPicture, let format else { return nil }
            return (unit, format)
        }
    }
}
