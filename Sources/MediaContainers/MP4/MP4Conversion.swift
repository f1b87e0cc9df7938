public import MediaCore
import H264
import HEVC

/// Annex-B streams as compressed frames and MP4 files, for `h264 convert` and the tests: the
/// frames carry the decoding and presentation times their picture order counts give (frame n
/// of the presentation order at n frame durations, after the stream's reordering delay, as
/// ``FLVConversion`` times FLV tags).
public enum MP4Conversion {
    /// The pictures of an H.264 or H.265 Annex-B stream (told by its NAL unit headers) as
    /// frames in decoding order: 4-byte length prefixes, the format of their parameter sets
    /// (H.264: each change of SPS/PPS a new format; H.265: the stream's first `hvcC`, the
    /// parameter sets out of band), keyframes at IDR (H.264) or IRAP (H.265) pictures. Pictures
    /// before the first parameter sets are left out.
    ///
    /// - Parameters:
    ///   - bytes: the Annex-B stream.
    ///   - frameRate: the frame rate; nil takes the SPS's VUI timing, or 25.
    /// - Throws: `missingParameterSet` when no picture comes with its parameter sets; the H.265
    ///   inspection's errors.
    public static func frames(fromAnnexB bytes: [UInt8], frameRate: FrameRate?) throws(MediaError) -> [CompressedFrame] {
        if AnnexB.carriesHEVC(bytes) { return try frames(fromHEVCAnnexB: bytes, frameRate: frameRate) }
        let pictures = AccessUnitAssembler.accessUnits(inAnnexB: bytes).filter(\.hasPicture)
        guard let first = pictures.first(where: { $0.formatDescription != nil })?.formatDescription else {
            throw MediaError(.missingParameterSet, field: "seq_parameter_set_rbsp", "no picture with its SPS and PPS in the stream")
        }
        let rate = frameRate ?? FrameRate(approximating: FrameRate.framesPerSecond(signalledBy: first.sequenceParameterSet))
        var order = AccessUnitPictureOrder()
        let slots = FLVConversion.frameSlots(pictureOrder: pictures.map { ($0.isIDR, order.picOrderCnt(of: $0)) })
        var frames: [CompressedFrame] = [], format: FormatDescription?
        for (unit, slot) in zip(pictures, slots) {
            guard let unitFormat = unit.formatDescription ?? format else { continue }
            format = unitFormat
            frames.append(CompressedFrame(data: unit.data, format: .h264(unitFormat), presentationTime: time(slot.presentation, rate),
                                          decodeTime: time(slot.decode, rate), isKeyframe: unit.isIDR))
        }
        return frames
    }

    /// ``frames(fromAnnexB:frameRate:)`` of an H.265 stream.
    static func frames(fromHEVCAnnexB bytes: [UInt8], frameRate: FrameRate?) throws(MediaError) -> [CompressedFrame] {
        let units = try HEVCStreamInspection(annexB: bytes).accessUnits.filter(\.hasPicture)
        let (record, samples) = try HEVCDecoderConfigurationRecord.hvcc(accessUnits: units, parameterSetsInBand: false)
        let rate = frameRate ?? record.sequenceParameterSet?.frameRate ?? FrameRate.unsignalled
        let slots = FLVConversion.frameSlots(pictureOrder: FLVConversion.pictureOrder(of: units))
        let format = VideoFormatDescription.hevc(record)
        return zip(samples, slots).map { sample, slot in
            CompressedFrame(data: sample.data, format: format, presentationTime: time(slot.presentation, rate),
                            decodeTime: time(slot.decode, rate), isKeyframe: sample.isIRAP)
        }
    }

    /// The time of frame slot `slot` at `rate`.
    static func time(_ slot: Int, _ rate: FrameRate) -> Duration {
        .seconds(1) * (slot * rate.denominator) / rate.numerator
    }

    /// The timescale that keeps every frame time of `rate` exact: 90 kHz when a frame is a
    /// whole number of its ticks, else the rate's numerator (24000 for 24000/1001).
    public static func videoTimescale(for rate: FrameRate) -> Int {
        (90_000 * rate.denominator) % rate.numerator == 0 ? 90_000 : rate.numerator
    }
}
