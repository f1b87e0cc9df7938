public import H264
public import HEVC

extension DecoderSession {
    /// Queues one frame of either codec for decoding and returns without waiting for libavcodec
    /// (VideoToolbox's `VTDecompressionSessionDecodeFrame`): what a camera, a publisher, an RTMP
    /// stream or an encoder hands out goes in as it is, its format and presentation time with it.
    ///
    /// - Parameters:
    ///   - frame: a video frame (4-byte lengths).
    ///   - duration: how long it is shown.
    /// - Throws: `MediaError.Code.invalidConfiguration` for a frame that is not video, or of
    ///   another codec than the session's; otherwise as
    ///   ``decode(_:presentationTimeStamp:duration:)-(AccessUnit,_,_)``.
    public func decode(_ frame: CompressedFrame, duration: Duration = .zero) throws(MediaError) {
        guard let format = frame.videoFormat else {
            throw MediaError(.invalidConfiguration, field: "format", "a decoder session decodes video frames")
        }
        if let record = format.hevc {
            try decode(HEVCAccessUnit(frame), formatDescription: record, presentationTimeStamp: frame.presentationTime, duration: duration)
        } else {
            try decode(AccessUnit(frame), presentationTimeStamp: frame.presentationTime, duration: duration)
        }
    }
}
