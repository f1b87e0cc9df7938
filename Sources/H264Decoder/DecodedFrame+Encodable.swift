public import H264

/// A decoded frame goes into an encoder session as it is: `VideoFrame(decodedFrame)` in
/// `H264Encoder`.
extension DecodedFrame: EncodablePicture {
    /// The layout of ``packedBytes()`` an encoder takes: `yuv420p` and `yuvj420p` (whose full
    /// range the encoder does not learn: set its VUI if it matters) are I420, `nv12` (hardware
    /// decoding) NV12, `bgra` BGRA, `yuv420p10le` 10-bit 4:2:0; nil for every other format.
    public var packedLayout: PackedPictureLayout? {
        switch pixelFormatName {
        case "yuv420p", "yuvj420p": .i420
        case "nv12": .nv12
        case "bgra": .bgra
        case "yuv420p10le": .yuv420p10
        default: nil
        }
    }
}
