public import H264
import MediaContainers

/// The bytes a tool writes for each decoded frame, in one of the outputs `h264 decode` offers:
/// a y4m stream (``Y4MFrameWriter``), the packed planes back to back (what
/// `ffmpeg -f rawvideo` writes), or FFmpeg's framemd5 listing (one line per frame, the header
/// before the first). Counts the frames and the damaged ones.
public struct DecodedFrameOutput: Sendable {
    /// What is written of each frame.
    public enum Format: String, Hashable, Sendable, CaseIterable {
        /// A yuv4mpegpipe stream: header, then `FRAME` and the planes of each frame.
        case y4m
        /// The planes of each frame, packed, in the stream's own pixel format.
        case raw
        /// FFmpeg's `-f framemd5` listing: the MD5 of each frame's packed planes.
        case framemd5
    }

    /// The output's format.
    public let format: Format
    /// Frames written so far.
    public private(set) var frameCount = 0
    /// Frames written so far that libavcodec flagged as damaged (concealed).
    public private(set) var damagedFrameCount = 0
    private var y4m = Y4MFrameWriter()

    /// An output that has written nothing yet.
    public init(format: Format) {
        self.format = format
    }

    /// The bytes of the next frame (for y4m and framemd5, the header first with the first frame),
    /// its time base the frame's duration; the frame is counted.
    ///
    /// - Throws: for y4m, the errors of ``Y4MFrameWriter/bytes(of:index:rate:)`` (a pixel format
    ///   y4m cannot hold, a format change).
    public mutating func bytes(of frame: DecodedFrame) throws(MediaError) -> [UInt8] {
        let rate = FrameRate(frameDuration: frame.duration)
        let bytes: [UInt8]
        switch format {
        case .framemd5:
            let header = frameCount > 0 ? "" : FrameMD5.header(width: frame.width, height: frame.height,
                                                               sampleAspectRatio: frame.sampleAspectRatio, rate: rate)
            bytes = Array((header + FrameMD5.line(index: frameCount, byteCount: frame.packedByteCount, md5: frame.md5())).utf8)
        case .raw:
            bytes = frame.packedBytes()
        case .y4m:
            bytes = try y4m.bytes(of: frame, index: frameCount, rate: rate)
        }
        frameCount += 1
        if frame.flags.contains(.damaged) { damagedFrameCount += 1 }
        return bytes
    }
}
