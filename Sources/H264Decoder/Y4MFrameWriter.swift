public import H264
import MediaContainers

extension MediaError.Code {
    /// A decoded frame's pixel format that y4m cannot hold (planar RGB, packed BGRA, NV12, a
    /// bit depth without a y4m `C` tag).
    public static let y4mUnsupportedPixelFormat = MediaError.Code(rawValue: "y4mUnsupportedPixelFormat")
    /// A decoded frame whose size or pixel format differs from the first one's: a y4m stream
    /// has one.
    public static let y4mFormatChanged = MediaError.Code(rawValue: "y4mFormatChanged")
}

/// The y4m (yuv4mpegpipe) bytes of decoded frames: the stream header (an H264Media
/// `Y4MHeader`) before the first frame, then `FRAME` and the packed planes of each.
///
/// A y4m stream has one size and pixel format: a frame of another is an error
/// (`MediaError.Code.y4mFormatChanged`), and so is a first frame whose pixel format y4m cannot
/// hold (`MediaError.Code.y4mUnsupportedPixelFormat`).
public struct Y4MFrameWriter: Sendable {
    /// The first frame's width, height and pixel format name; nil before it.
    public private(set) var format: (width: Int, height: Int, pixelFormat: String)?

    /// A writer that has written nothing yet.
    public init() {}

    /// The bytes of `frame`, the stream header first for the first frame.
    ///
    /// - Parameters:
    ///   - frame: the decoded frame.
    ///   - index: its index in the output, for the error.
    ///   - rate: the stream's frame rate, written in the header.
    /// - Returns: the header (first frame only), the `FRAME` line and the planes.
    /// - Throws: `MediaError.Code.y4mFormatChanged` for a frame whose size or pixel format
    ///   differs from the first's; `MediaError.Code.y4mUnsupportedPixelFormat` for a pixel format
    ///   y4m cannot hold.
    public mutating func bytes(of frame: DecodedFrame, index: Int, rate: FrameRate) throws(MediaError) -> [UInt8] {
        var bytes: [UInt8] = []
        let size = (frame.width, frame.height, frame.pixelFormatName)
        if let first = format {
            guard first == size else {
                throw MediaError(.y4mFormatChanged, field: "frame \(index)", "frame \(index) is \(frame.width)x\(frame.height) "
                    + "\(frame.pixelFormatName), the stream began \(first.0)x\(first.1) \(first.2): y4m cannot change")
            }
        } else {
            bytes += try Self.header(frame, rate: rate).utf8
            format = size
        }
        bytes += "FRAME\n".utf8
        bytes += frame.packedBytes()
        return bytes
    }

    /// The y4m stream header line for the frame's size, sample aspect ratio and pixel format
    /// (H264Media's `Y4MHeader.colourspace(chromaFormatIdc:bitDepth:)` picks the tag;
    /// `XCOLORRANGE=FULL` for a full-range frame, as FFmpeg writes for the `yuvj` formats).
    ///
    /// - Parameters:
    ///   - frame: the first frame of the stream.
    ///   - rate: the stream's frame rate.
    /// - Returns: the header line, `\n` included.
    /// - Throws: `MediaError.Code.y4mUnsupportedPixelFormat` naming the pixel format when y4m
    ///   cannot hold it.
    public static func header(_ frame: DecodedFrame, rate: FrameRate) throws(MediaError) -> String {
        let idc: Int? = switch frame.chromaFormat {
        case .monochrome: 0
        case .yuv420: 1
        case .yuv422: 2
        case .yuv444: 3
        case .none: nil
        }
        guard frame.layout == .planar, let idc, let colourspace = Y4MHeader.colourspace(chromaFormatIdc: idc, bitDepth: frame.bitDepth) else {
            let kind = switch frame.layout {
            case .planarGBR: "planar RGB"
            case .packedBGRA: "packed RGB"
            case .semiPlanar: "interleaved chroma"
            case .planar: "\(frame.bitDepth)-bit \(frame.chromaFormat == .monochrome ? "grey" : "YUV")"
            }
            throw MediaError(.y4mUnsupportedPixelFormat, field: frame.pixelFormatName,
                            "y4m cannot hold \(frame.pixelFormatName) (\(kind))")
        }
        let sar = frame.sampleAspectRatio
        var extensions = colourspace.extension.map { [$0] } ?? []
        if frame.colorDescription.videoFullRangeFlag { extensions.append("COLORRANGE=FULL") }
        return Y4MHeader(width: frame.width, height: frame.height, frameRate: rate, colorspace: colourspace.colorspace,
                         aspectRatio: (sar.width, sar.width == 0 ? 0 : sar.height), extensions: extensions).line
    }
}
