/// The video coding standard of a stream or a session: H.264 (ITU-T H.264 | ISO/IEC 14496-10)
/// or H.265 (ITU-T H.265 | ISO/IEC 23008-2, HEVC). VideoToolbox names them by
/// `CMVideoCodecType`: `kCMVideoCodecType_H264` and `kCMVideoCodecType_HEVC`.
public enum VideoCodec: String, Hashable, Sendable, CaseIterable {
    /// H.264 / AVC.
    case h264
    /// H.265 / HEVC.
    case hevc
}
