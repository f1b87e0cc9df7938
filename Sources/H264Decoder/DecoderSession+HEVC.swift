public import H264
public import HEVC
public import Logging

/// H.265: the same session, opened on libavcodec's HEVC decoder. The codec is chosen once, from
/// the configuration (`DecoderConfiguration.codec`), the format description, or the type of
/// the first access unit, and a session keeps it: an access unit of the other codec throws
/// `MediaError.Code.invalidConfiguration`.
extension DecoderSession {
    /// Creates a session that decodes H.265 (VideoToolbox's `VTDecompressionSessionCreate` with
    /// a `kCMVideoCodecType_HEVC` format description). Cheap: libavcodec opens with the first
    /// access unit.
    ///
    /// - Parameters:
    ///   - hevcFormatDescription: the stream's `hvcC` (from an MP4 track, an SDP's
    ///     `sprop-vps/sps/pps`, an FLV `hvc1` sequence start); nil when the parameter sets come
    ///     in band.
    ///   - configuration: threads and real-time mode (validated here); its `codec`, when set,
    ///     must be `.hevc`.
    ///   - logger: where the session reports damaged input and libavcodec failures.
    ///   - outputHandler: called with every decoded frame on the decoding queue.
    /// - Throws: `MediaError.Code.invalidConfiguration` naming an invalid property.
    public convenience init(hevcFormatDescription: HEVCDecoderConfigurationRecord?, configuration: DecoderConfiguration = DecoderConfiguration(),
                            logger: Logger = DecoderSession.defaultLogger, outputHandler: OutputHandler? = nil) throws(MediaError) {
        var configuration = configuration
        if configuration.codec == nil { configuration.codec = .hevc }
        try self.init(format: hevcFormatDescription.map(StreamFormat.hevc), configuration: configuration, logger: logger,
                      outputHandler: outputHandler)
    }

    /// The `hvcC` of the H.265 stream the session works on now: the one given at creation,
    /// replaced by the format of each access unit that has one; nil while none was given (the
    /// parameter sets in band only) and in an H.264 session. The H.265 counterpart of
    /// ``formatDescription``.
    public var hevcFormatDescription: HEVCDecoderConfigurationRecord? { shared.withLock { $0.format?.hevc } }

    /// Whether the session can decode H.265 frames of `hevcFormatDescription` —
    /// VideoToolbox's `VTDecompressionSessionCanAcceptFormatDescription`: true when the record
    /// holds an SPS and a PPS and the session is not decoding H.264.
    public func canAccept(_ hevcFormatDescription: HEVCDecoderConfigurationRecord) -> Bool {
        guard accepts(.hevc) else { return false }
        let types = Set(hevcFormatDescription.arrays.filter { !$0.nalUnits.isEmpty }.map(\.nalUnitType))
        return types.isSuperset(of: [.sequenceParameterSet, .pictureParameterSet])
    }

    /// Queues one H.265 access unit for decoding and returns without waiting for libavcodec
    /// (VideoToolbox's `VTDecompressionSessionDecodeFrame`).
    ///
    /// - Parameters:
    ///   - accessUnit: the NAL units of one picture, length-prefixed with 4 bytes, as
    ///     `HEVCAccessUnitAssembler` and `HEVCRTPDepacketizer` produce them.
    ///   - formatDescription: the `hvcC` it is decoded with, when it changed; nil to keep the
    ///     session's (or use the parameter sets in band).
    ///   - presentationTimeStamp: when the picture is shown; nil when unknown.
    ///   - duration: how long it is shown.
    /// - Throws: `MediaError.Code.invalidState` after ``invalidate()``;
    ///   `MediaError.Code.invalidConfiguration` in a session decoding H.264; the errors of
    ///   `AVCC.nalUnits(in:lengthSize:allowingEmptyNALUnits:)` when the data is not AVCC;
    ///   `MediaError.Code.decoderFailed` when libavcodec cannot open or failed earlier.
    public func decode(_ accessUnit: HEVCAccessUnit, formatDescription: HEVCDecoderConfigurationRecord? = nil,
                       presentationTimeStamp: Duration? = nil, duration: Duration = .zero) throws(MediaError) {
        try Self.checkAVCC(accessUnit.data, lengthSize: 4)
        try enqueue(Job(data: accessUnit.data, lengthSize: 4, format: formatDescription.map(StreamFormat.hevc), codec: .hevc,
                        carriesParameterSets: accessUnit.nalUnitTypes.contains(.sequenceParameterSet), isKeyframe: accessUnit.isIRAP,
                        presentationTimeStamp: presentationTimeStamp, duration: duration))
    }

    /// Queues one H.265 access unit given as HVCC bytes (a sample of an MP4 `hvc1`/`hev1` track)
    /// and returns without waiting for libavcodec (VideoToolbox's
    /// `VTDecompressionSessionDecodeFrame`).
    ///
    /// - Parameters:
    ///   - hvcc: length-prefixed NAL units of one access unit.
    ///   - formatDescription: the sample's `hvcC` (its length size and parameter sets); nil to
    ///     use the session's, or 4-byte lengths and in-band parameter sets without one.
    ///   - presentationTimeStamp: when the picture is shown; nil when unknown.
    ///   - duration: how long it is shown.
    /// - Throws: as ``decode(_:formatDescription:presentationTimeStamp:duration:)``.
    public func decode(hvcc: [UInt8], formatDescription: HEVCDecoderConfigurationRecord? = nil,
                       presentationTimeStamp: Duration? = nil, duration: Duration = .zero) throws(MediaError) {
        let lengthSize = formatDescription?.nalUnitLengthSize ?? initialFormat?.nalUnitLengthSize ?? 4
        try Self.checkAVCC(hvcc, lengthSize: lengthSize)
        try enqueue(Job(data: hvcc, lengthSize: lengthSize, format: formatDescription.map(StreamFormat.hevc), codec: .hevc,
                        carriesParameterSets: false, isKeyframe: false,
                        presentationTimeStamp: presentationTimeStamp, duration: duration))
    }

    /// True when the session is open and decodes `codec`, or has not chosen one yet.
    func accepts(_ codec: VideoCodec) -> Bool {
        shared.withLock { s in
            !s.lifecycle.isInvalidated && (s.codec ?? s.configuration.codec ?? s.format?.codec ?? codec) == codec
        }
    }
}
