import H264Decoder

/// The y4m (yuv4mpegpipe) bytes of decoded frames, for `h264 decode` and `h264 receive`: the
/// stream header (`DecodeCommand.y4mHeader`) before the first frame, then `FRAME` and the
/// packed planes of each. A y4m stream has one size and pixel format: a frame of another is an
/// error.
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
    ///   that is not YUV.
    mutating func bytes(of frame: DecodedFrame, index: Int, rate: (Int, Int)) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let size = (frame.width, frame.height, frame.pixelFormatName)
        if let first = format {
            guard first == size else {
                throw CLIError("frame \(index) is \(frame.width)x\(frame.height) \(frame.pixelFormatName), the stream began \(first.0)x\(first.1) \(first.2): y4m cannot change; \(hint)")
            }
        } else {
            bytes += try DecodeCommand.y4mHeader(frame, rate: rate).utf8
            format = size
        }
        bytes += "FRAME\n".utf8
        bytes += frame.packedBytes()
        return bytes
    }
}
