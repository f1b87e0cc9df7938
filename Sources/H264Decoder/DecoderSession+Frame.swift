public import H264
public import HEVC

extension DecoderSession {
    /// Queues one frame of either codec for decoding and returns without waiting for libavcodec
    /// (VideoToolbox's `VTDecompressionSessionDecodeFrame`): what a camera, a publisher, an RTMP
    /// stream or an encoder hands out goes in as it is, its format and presentation time with it.
    ///
    /// An audio frame (a camera's sound track, in the same event case as its pictures) is passed
    /// over: there is nothing here to decode it, and nothing is thrown.
    ///
    /// - Parameters:
    ///   - frame: a video frame (4-byte lengths), or an audio frame (ignored).
    ///   - duration: how long it is shown.
    /// - Throws: `MediaError.Code.invalidConfiguration` for a frame of another codec than the
    ///   session's; otherwise as
    ///   ``decode(_:presentationTimeStamp:duration:)-(AccessUnit,_,_)``.
    public func decode(_ frame: CompressedFrame, duration: Duration = .zero) throws(MediaError) {
        guard let format = frame.videoFormat else { return }
        if let record = format.hevc {
            try decode(HEVCAccessUnit(frame), formatDescription: record, presentationTimeStamp: frame.presentationTime, duration: duration)
        } else {
            try decode(AccessUnit(frame), presentationTimeStamp: frame.presentationTime, duration: duration)
        }
    }
}
