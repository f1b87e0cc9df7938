public import MediaCore
public import H264
import HEVC

/// What every stream inspection gives, whatever its codec: the diagnostics, and the report as
/// JSON or as tables. ``StreamInspection`` (H.264) and ``HEVCStreamInspection`` (H.265) conform;
/// ``AnyStreamInspection`` holds either.
public protocol StreamInspectionReport: Sendable {
    /// The warnings and damaged units found, in stream order.
    var diagnostics: [StreamInspection.Diagnostic] { get }
    /// The inspection as one JSON object.
    func json() -> String
    /// The inspection as tables.
    func table() -> String
}

extension StreamInspection: StreamInspectionReport {}
extension HEVCStreamInspection: StreamInspectionReport {}

/// The inspection of a stream of either codec, told from the stream itself: an H.265 Annex-B
/// stream (`AnnexB.carriesHEVC(_:nalUnitLimit:)`) gives an ``HEVCStreamInspection``, anything
/// else — Annex-B or AVCC H.264 — a ``StreamInspection``. What `h264 inspect` prints.
public struct AnyStreamInspection: Sendable {
    /// The codec the stream was told to be.
    public let codec: VideoCodec
    /// The codec's own inspection (cast it to ``StreamInspection`` or ``HEVCStreamInspection``
    /// for its tables' rows).
    public let report: any StreamInspectionReport

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
            codec = .hevc
            report = try HEVCStreamInspection(annexB: bytes)
        } else {
            codec = .h264
            report = try StreamInspection(bytes: bytes, configurationRecord: configurationRecord,
                                          lengthSize: lengthSize ?? configurationRecord?.nalUnitLengthSize)
        }
    }

    /// The warnings and damaged units found, in stream order.
    public var diagnostics: [StreamInspection.Diagnostic] { report.diagnostics }

    /// The inspection as one JSON object (``StreamInspection/json()``, ``HEVCStreamInspection/json()``).
    public func json() -> String { report.json() }

    /// The inspection as tables (``StreamInspection/table()``, ``HEVCStreamInspection/table()``).
    public func table() -> String { report.table() }
}
