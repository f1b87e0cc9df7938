import H264
import H264Decoder
import H264Media

/// The y4m (yuv4mpegpipe) bytes of decoded frames, for `h264 decode` and `h264 receive`: the
/// stream header (``header(_:rate:hint:)``, an H264Media `Y4MHeader`) before the first frame, then `FRAME` and the packed
/// planes of each. A y4m stream has one size and pixel format: a frame of another is an error,
/// and so is a first frame whose pixel format y4m cannot hold.
struct Y4MFrameWriter {
    /// The first frame's width, height and pixel format; nil before it.
    private(set) var format: (width: Int, height: Int, pixelFormat: String)?
    /// How to keep a stream whose size changes, for the error (e.g. "use --format raw").
    let hint: String

    /// The bytes of `frame`, the stream header first for the first frame.
    ///
    /// - Parameters:
    ///   - frame: the decoded frame.
    ///   - index: its index in the output, for the error.
    ///   - rate: the stream's frame rate as a fraction, written in the header.
    /// - Throws: `CLIError` for a frame whose size or pixel format differs from the first's, or
    ///   whose pixel format y4m cannot hold.
    mutating func bytes(of frame: DecodedFrame, index: Int, rate: FrameRate) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let size = (frame.width, frame.height, frame.pixelFormatName)
        if let first = format {
            guard first == size else {
                throw CLIError("frame \(index) is \(frame.width)x\(frame.height) \(frame.pixelFormatName), the stream began \(first.0)x\(first.1) \(first.2): y4m cannot change; \(hint)")
            }
        } else {
            bytes += try Self.header(frame, rate: rate, hint: hint).utf8
            format = size
        }
        bytes += "FRAME\n".utf8
        bytes += frame.packedBytes()
        return bytes
    }

    /// The y4m stream header for the frame's size, sample aspect ratio and pixel format
    /// (H264Media's ``Y4MHeader/colourspace(chromaFormatIdc:bitDepth:)`` picks the tag;
    /// `XCOLORRANGE=FULL` for a full-range frame, as FFmpeg writes for the `yuvj` formats).
    ///
    /// - Throws: `CLIError` naming the pixel format, ending in `hint`, when y4m cannot hold it.
    static func header(_ frame: DecodedFrame, rate: FrameRate, hint: String) throws -> String {
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
            throw CLIError("y4m cannot hold \(frame.pixelFormatName) (\(kind)): \(hint)")
        }
        let sar = frame.sampleAspectRatio
        var extensions = colourspace.extension.map { [$0] } ?? []
        if frame.colorDescription.videoFullRangeFlag { extensions.append("COLORRANGE=FULL") }
        return Y4MHeader(width: frame.width, height: frame.height, frameRate: rate, colorspace: colourspace.colorspace,
                         aspectRatio: (sar.width, sar.width == 0 ? 0 : sar.height), extensions: extensions).line
    }
}
