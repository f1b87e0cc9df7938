public import H264
public import HEVC

/// The inspection of a stream of either codec, told from the stream itself: an H.265 Annex-B
/// stream (`AnnexB.carriesHEVC(_:nalUnitLimit:)`) gives an ``HEVCStreamInspection``, anything
/// else — Annex-B or AVCC H.264 — a ``StreamInspection``. What `h264 inspect` prints.
public enum AnyStreamInspection: Sendable {
    /// An H.264 stream's inspection.
    case h264(StreamInspection)
    /// An H.265 stream's inspection.
    case hevc(HEVCStreamInspection)

    /// Inspects `bytes`: H.265 when they are Annex-B whose NAL headers say so, H.264 otherwise.
    ///
    /// - Parameters:
    ///   - bytes: the stream.
    ///   - configurationRecord: an avcC: the stream is AVCC H.264 with its length size.
    ///   - lengthSize: the stream is AVCC H.264 with lengths of this many bytes.
    /// - Throws: the errors of ``StreamInspection/init(bytes:configurationRecord:lengthSize:)``
    ///   and ``HEVCStreamInspection/init(annexB:)`` (framing lost).
    public init(bytes: [UInt8], configurationRecord: AVCDecoderConfigurationRecord?, lengthSize: Int?) throws(MediaError) {
        if configurationRecord == nil, lengthSize == nil, AnnexB.carriesHEVC(bytes) {
            self = .hevc(try HEVCStreamInspection(annexB: bytes))
        } else {
            self = .h264(try StreamInspection(bytes: bytes, configurationRecord: configurationRecord,
                                              lengthSize: lengthSize ?? configurationRecord?.nalUnitLengthSize))
        }
    }

    /// The warnings and damaged units found, in stream order.
    public var diagnostics: [StreamInspection.Diagnostic] {
        switch self {
        case .h264(let inspection): inspection.diagnostics
        case .hevc(let inspection): inspection.diagnostics
        }
    }

    /// The inspection as one JSON object (``StreamInspection/json()``, ``HEVCStreamInspection/json()``).
    public func json() -> String {
        switch self {
        case .h264(let inspection): inspection.json()
        case .hevc(let inspection): inspection.json()
        }
    }

    /// The inspection as tables (``StreamInspection/table()``, ``HEVCStreamInspection/table()``).
    public func table() -> String {
        switch self {
        case .h264(let inspection): inspection.table()
        case .hevc(let inspection): inspection.table()
        }
    }
}
