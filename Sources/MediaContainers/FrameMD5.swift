public import H264

/// FFmpeg's framemd5 listing (`ffmpeg -i INPUT -f framemd5 -`, version 2) of one video stream:
/// a header, then one line per frame with its MD5. The digest itself is the caller's (it is of
/// the frame's packed planes, `DecodedFrame.md5()` in H264Decoder).
public enum FrameMD5 {
    /// The listing's header for a stream of `width × height` frames at `rate`.
    ///
    /// - Parameters:
    ///   - width: the frames' width.
    ///   - height: the frames' height.
    ///   - sampleAspectRatio: the sample aspect ratio; a width of 0 (unknown) is written `0/1`.
    ///   - rate: the frame rate; the time base (`#tb`) is its inverse.
    /// - Returns: the header lines, each ending in `\n`.
    public static func header(width: Int, height: Int, sampleAspectRatio: (width: Int, height: Int), rate: FrameRate) -> String {
        let sar = sampleAspectRatio
        return """
        #format: frame checksums
        #version: 2
        #hash: MD5
        #tb 0: \(rate.denominator)/\(rate.numerator)
        #media_type 0: video
        #codec_id 0: rawvideo
        #dimensions 0: \(width)x\(height)
        #sar 0: \(sar.width)/\(sar.width == 0 ? 1 : sar.height)
        #stream#, dts,        pts, duration,     size, hash

        """
    }

    /// One frame's line: stream 0, the frame's index as its time in frame durations.
    ///
    /// - Parameters:
    ///   - index: the frame's index in output order.
    ///   - byteCount: the size of its packed planes.
    ///   - md5: the MD5 of its packed planes, 32 lowercase hex digits.
    /// - Returns: the line, ending in `\n`.
    public static func line(index: Int, byteCount: Int, md5: String) -> String {
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: " ", count: max(0, width - text.count)) + text
        }
        return "0, \(pad(index, 10)), \(pad(index, 10)), \(pad(1, 8)), \(pad(byteCount, 8)), \(md5)\n"
    }
}
