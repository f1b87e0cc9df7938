import H264
import MediaContainers
import H264TestSupport
import Testing

/// FFmpeg's framemd5 listing, as `ffmpeg -i INPUT -f framemd5 -` writes it (libavformat/hashenc.c,
/// version 2). `h264 decode --framemd5` is compared with FFmpeg's on real streams in
/// H264CLITests; these pin the text.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct FrameMD5Tests {
    @Test func header() {
        let text = FrameMD5.header(width: 80, height: 44, sampleAspectRatio: (7, 5), rate: FrameRate(numerator: 30000, denominator: 1001))
        #expect(text == """
        #format: frame checksums
        #version: 2
        #hash: MD5
        #tb 0: 1001/30000
        #media_type 0: video
        #codec_id 0: rawvideo
        #dimensions 0: 80x44
        #sar 0: 7/5
        #stream#, dts,        pts, duration,     size, hash

        """)
        // An unknown aspect ratio is 0/1.
        #expect(FrameMD5.header(width: 2, height: 2, sampleAspectRatio: (0, 1), rate: .unsignalled).contains("#sar 0: 0/1\n"))
    }

    @Test func line() {
        #expect(FrameMD5.line(index: 12, byteCount: 5280, md5: "0123456789abcdef0123456789abcdef")
                == "0,         12,         12,        1,     5280, 0123456789abcdef0123456789abcdef\n")
    }
}
