import H264
import H264Streaming
import H264TestSupport
import Testing

/// `AnnexBFilePlayer` stamps a B-frame file's pictures with presentation times (the RTP
/// timestamps a relay sends), not decoding times: x264's B-pyramid stream at its 12 fps.
@Suite struct AnnexBFilePlayerTests {
    @Test func bFramesGetPresentationTimes() async throws {
        let player = AnnexBFilePlayer(path: try TestFixtures.path("flv/x264_bframes_320x192_9f.264"))
        var frames: [LiveFrame] = []
        for try await frame in player { frames.append(frame) }
        let interval = Duration.seconds(1) / 12
        // In frame intervals (the player's interval is 1/12 s computed from a Double).
        let times = frames.compactMap(\.presentationTime).map { Int(($0 / interval).rounded()) }
        #expect(frames.count == 9 && times.count == 9)
        #expect(frames.map(\.isKeyframe) == [true, false, false, false, false, false, true, false, false])
        // Reorder depth 2 (the VUI's max_num_reorder_frames): times of 2…10 intervals. Decode
        // order I P B b b P | I P B, in presentation order.
        #expect(times == [2, 6, 4, 3, 5, 7, 8, 10, 9])
    }
}
