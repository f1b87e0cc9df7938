import H264Decoder

/// The y4m (yuv4mpegpipe) bytes of decoded frames, for `h264 decode` and `h264 receive`: the
/// stream header (``header(_:rate:hint:)``) before the first frame, then `FRAME` and the packed
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
    mutating func bytes(of frame: DecodedFrame, index: Int, rate: (Int, Int)) throws -> [UInt8] {
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

    /// The y4m colourspace tags of the pixel formats y4m holds: those FFmpeg's yuv4mpegpipe
    /// muxer writes (8-bit `yuv420p`, `yuv422p`, `yuv444p`, their `yuvj` twins and `gray`; with
    /// `-strict -1` also `yuv4xxp` at 9, 10, 12 and 14 bits and `gray` at 9, 10 and 12), with the
    /// tags it writes for them. Not `gray14le`, planar RGB (`gbrp` …), `nv12` or `bgra`.
    static func colourspace(_ frame: DecodedFrame) -> String? {
        guard frame.layout == .planar else { return nil }
        let depth = frame.bitDepth
        switch (frame.chromaFormat, depth) {
        case (.yuv420, 8): return "C420jpeg XYSCSS=420JPEG"
        case (.yuv422, 8): return "C422 XYSCSS=422"
        case (.yuv444, 8): return "C444 XYSCSS=444"
        case (.monochrome, 8): return "Cmono"
        case (.yuv420, 9), (.yuv420, 10), (.yuv420, 12), (.yuv420, 14): return "C420p\(depth) XYSCSS=420P\(depth)"
        case (.yuv422, 9), (.yuv422, 10), (.yuv422, 12), (.yuv422, 14): return "C422p\(depth) XYSCSS=422P\(depth)"
        case (.yuv444, 9), (.yuv444, 10), (.yuv444, 12), (.yuv444, 14): return "C444p\(depth) XYSCSS=444P\(depth)"
        case (.monochrome, 9), (.monochrome, 10), (.monochrome, 12): return "Cmono\(depth)"
        default: return nil
        }
    }

    /// The y4m stream header FFmpeg's yuv4mpegpipe muxer writes for the frame's pixel format
    /// (`XCOLORRANGE=FULL` for a full-range frame, as FFmpeg writes for the `yuvj` formats).
    ///
    /// - Throws: `CLIError` naming the pixel format, ending in `hint`, when y4m cannot hold it.
    static func header(_ frame: DecodedFrame, rate: (Int, Int), hint: String) throws -> String {
        guard let colourspace = colourspace(frame) else {
            let kind = switch frame.layout {
            case .planarGBR: "planar RGB"
            case .packedBGRA: "packed RGB"
            case .semiPlanar: "interleaved chroma"
            case .planar: "\(frame.bitDepth)-bit \(frame.chromaFormat == .monochrome ? "grey" : "YUV")"
            }
            throw CLIError("y4m cannot hold \(frame.pixelFormatName) (\(kind)): \(hint)")
        }
        let sar = frame.sampleAspectRatio
        let range = frame.colorDescription.videoFullRangeFlag ? " XCOLORRANGE=FULL" : ""
        return "YUV4MPEG2 W\(frame.width) H\(frame.height) F\(rate.0):\(rate.1) Ip A\(sar.width):\(sar.width == 0 ? 0 : sar.height) \(colourspace)\(range)\n"
    }
}
