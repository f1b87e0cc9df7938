/// A decoded picture an encoder session takes as it is: `H264Decoder`'s `DecodedFrame` conforms,
/// and `H264Encoder`'s `VideoFrame` has an initializer from any conforming picture, so a
/// transcoder hands a decoded frame to an encoder without copying planes itself — the two
/// modules meet here, and neither imports the other.
public protocol EncodablePicture: Sendable {
    /// The width in pixels.
    var width: Int { get }
    /// The height in pixels.
    var height: Int { get }
    /// How ``packedBytes()`` lays the picture out, when it is a layout an encoder takes; nil
    /// for other pixel formats (4:2:2, 4:4:4, grey, RGB planes).
    var packedLayout: PackedPictureLayout? { get }
    /// The samples, plane after plane, without row padding.
    func packedBytes() -> [UInt8]
}

/// The layouts of an ``EncodablePicture`` an encoder takes, named as `VideoFrame.PixelFormat`
/// names them (same raw values).
public enum PackedPictureLayout: String, Hashable, Sendable, CaseIterable {
    /// 8-bit 4:2:0 planar: Y, Cb, Cr (FFmpeg's `yuv420p`, and `yuvj420p`).
    case i420
    /// 8-bit 4:2:0 semi-planar: Y, then interleaved Cb, Cr (FFmpeg's `nv12`).
    case nv12
    /// 8-bit packed B, G, R, A (FFmpeg's `bgra`).
    case bgra
    /// 10-bit 4:2:0 planar, 16-bit little-endian samples (FFmpeg's `yuv420p10le`).
    case yuv420p10
}
