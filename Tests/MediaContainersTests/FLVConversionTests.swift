import H264
import MediaContainers
import H264TestSupport
import Testing

/// Annex-B → FLV → Annex-B in the library, on x264's B-pyramid stream (ffprobe, GStreamer and
/// x264's own timestamps check the FLV in H264CLITests' FLVConvertTests).
@Suite(.ownThread, .timeLimit(.minutes(5))) struct FLVConversionTests {
    /// Fixtures/flv/x264_bframes_320x192_9f.264: 9 frames at 12 fps (VUI timing), B-pyramid, IDR at 0 and 6.
    static let stream = "flv/x264_bframes_320x192_9f.264"

    static func slices(_ annexB: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnits(in: annexB).map { Array(annexB[$0.range]) }.filter { NALUnitHeader(byte: $0[0]).nalUnitType.isVCL }
    }

    @Test func roundTripKeepsEverySlice() throws {
        let annexB = try TestFixtures.data(Self.stream)
        let flv = try FLVConversion.flv(fromAnnexB: annexB, frameRate: nil, syntax: .legacy)
        #expect(FLVConversion.isFLV(flv))
        let back = try FLVConversion.annexB(fromFLV: flv)
        #expect(back.diagnostics.isEmpty)
        #expect(Self.slices(back.bytes) == Self.slices(annexB))
        #expect(Self.slices(annexB).count == 9)
    }

    /// Decoding times step by one frame at the VUI's 12 fps; presentation times are a permutation
    /// of the same steps shifted by the reordering delay, never before decoding.
    @Test func timestampsFollowPictureOrder() throws {
        let units = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data(Self.stream)).filter(\.hasPicture)
        let rate = FrameRate.framesPerSecond(signalledBy: units.first?.formatDescription?.sequenceParameterSet)
        #expect(rate == 12)
        let times = FLVConversion.timestamps(of: units, frameRate: rate)
        #expect(times.allSatisfy { $0.presentation >= $0.decode })
        #expect(times.contains { $0.presentation != $0.decode })
        let milliseconds = { (frames: Int) in Int64((Double(frames) * 1000 / 12).rounded()) }
        let delay = Int((Double(times.map(\.presentation).min()!) * 12 / 1000).rounded())
        #expect(delay > 0)
        #expect(times.map(\.decode) == (0..<9).map(milliseconds))
        #expect(Set(times.map(\.presentation)) == Set((delay..<(delay + 9)).map(milliseconds)))
    }

    /// An FLV without H.264 frames is reported, not thrown.
    @Test func noFramesIsADiagnostic() throws {
        let header: [UInt8] = [0x46, 0x4C, 0x56, 1, 1, 0, 0, 0, 9, 0, 0, 0, 0]
        let converted = try FLVConversion.annexB(fromFLV: header)
        #expect(converted.bytes.isEmpty)
        #expect(converted.diagnostics.map(\.code) == [.missingParameterSet])
    }
}
