import Foundation
import H264
import H264Streaming
import HEVC
import H264TestSupport
import Testing

/// `AnnexBFilePlayer` stamps a B-frame file's pictures with presentation times (the RTP
/// timestamps a relay sends), not decoding times: x264's B-pyramid stream at its 12 fps.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct AnnexBFilePlayerTests {
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

/// `AnnexBFilePlayer` of an H.265 file (x265 with B-frames and an open GOP: IDR, then CRA):
/// told from its NAL unit headers, each frame in the `hvcC` of its parameter sets, keyframes
/// at its IRAP pictures, and presentation times from `PicOrderCntVal` — every place once, none
/// before its decoding, not in decoding order.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct AnnexBFilePlayerHEVCTests {
    @Test func anH265FileGetsItsFormatAndPresentationTimes() async throws {
        let player = AnnexBFilePlayer(path: try TestFixtures.path("hevc/main_gop_bframes_cra.265"))
        var frames: [LiveFrame] = []
        for try await frame in player { frames.append(frame) }
        let interval = Duration.seconds(1) / 30
        let presentation = frames.compactMap(\.presentationTime).map { Int(($0 / interval).rounded()) }
        let decoding = frames.compactMap(\.decodeTime).map { Int(($0 / interval).rounded()) }
        #expect(frames.count == 60 && presentation.count == 60 && decoding == Array(0..<60))
        #expect(frames.allSatisfy { $0.format?.codec == .hevc && $0.format.map { $0.dimensions == (320, 180) } == true })
        let units = HEVCAccessUnitAssembler.accessUnits(inAnnexB: [UInt8](try Data(contentsOf: TestFixtures.url("hevc/main_gop_bframes_cra.265"))))
        #expect(frames.map(\.isKeyframe) == units.map(\.isIRAP) && frames.filter(\.isKeyframe).count == 2, "the IDR and the CRA")
        #expect(frames.map(\.avcc) == units.map(\.data))
        let shift = try #require(presentation.min())
        #expect(Set(presentation).count == 60 && presentation.max() == shift + 59, "each place once")
        #expect(zip(presentation, decoding).allSatisfy { $0 >= $1 }, "none presented before it is decoded")
        #expect(presentation != presentation.sorted(), "B-frames: presentation order is not decoding order")
    }
}
