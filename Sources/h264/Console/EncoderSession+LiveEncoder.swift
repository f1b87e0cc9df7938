public import H264Encoder
public import H264Streaming

/// `h264 serve` paces its `EncoderSession` with H264Streaming's `FramePacer` (which does not
/// depend on H264Encoder).
extension EncoderSession: LiveEncoder {}
