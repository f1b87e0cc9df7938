import H264
import H264Decoder
import H264TestSupport
import Testing

/// Every conformance stream decodes to exactly FFmpeg's frames: the same count, order, cropping
/// and per-frame MD5 as `ffmpeg -f framemd5` (computed at test time by the ffmpeg on PATH). The
/// arguments run in parallel.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct ConformanceDecodeTests {
    @Test(arguments: TestFixtures.conformanceStreams)
    func decodesLikeFFmpeg(_ stream: String) throws {
        let path = try TestFixtures.path("conformance/\(stream)")
        let expected = try DecoderTestSupport.ffmpegFrames(path: path)
        let result = try DecoderTestSupport.decode(annexB: TestFixtures.data("conformance/\(stream)"))
        result.session.invalidate()
        #expect(!expected.isEmpty)
        #expect(result.digests.count == expected.count, "\(stream): \(result.digests.count) frames, FFmpeg \(expected.count)")
        let firstDifference = zip(result.digests, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstDifference == nil, "\(stream): frame \(firstDifference?.offset ?? -1): ours \(String(describing: firstDifference?.element.0)), FFmpeg \(String(describing: firstDifference?.element.1))")
    }
}
