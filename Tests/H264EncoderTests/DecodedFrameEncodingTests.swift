import H264
import H264Decoder
@testable import H264Encoder
import H264TestSupport
import Testing

/// A decoded frame goes into an encoder as it is (`VideoFrame(decodedFrame)`): the same pixels,
/// and the same encoded bytes, as a frame built by copying the decoded planes row by row.
@Suite(.ownThread) struct DecodedFrameEncodingTests {
    /// The reference: the decoded planes copied row by row (without the decoder's row padding)
    /// into one I420 buffer, as a caller would do by hand.
    static func planeCopy(_ frame: DecodedFrame) throws -> VideoFrame {
        var bytes: [UInt8] = []
        for index in 0..<frame.planeCount {
            _ = frame.withPlane(index) { buffer, plane in
                for row in 0..<plane.height {
                    let start = row * plane.bytesPerRow
                    bytes.append(contentsOf: buffer[start..<(start + plane.rowByteCount)])
                }
            }
        }
        return try VideoFrame(pixelFormat: .i420, width: frame.width, height: frame.height, contiguous: bytes)
    }

    static func decodedFixture() throws -> [DecodedFrame] {
        let frames = Collector<DecodedFrame>()
        let decoder = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1)), outputHandler: frames.handler)
        for unit in AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("conformance/BA_MW_D.264")) {
            try decoder.decode(unit)
        }
        try decoder.waitForAsynchronousFrames()
        decoder.invalidate()
        return frames.all
    }

    /// Every decoded frame of BA_MW_D (176×144, `yuv420p`): `VideoFrame(decoded)` is I420 with
    /// the plane-copy reference's pixels, and encoding either gives the same bytes.
    @Test func aDecodedFrameEncodesAsItsPlaneCopy() throws {
        let decoded = try Self.decodedFixture()
        #expect(decoded.count == 100)
        var configuration = EncoderConfiguration.liveCapture
        configuration.threads = 1
        let direct = Collector<EncodedFrame>(), copied = Collector<EncodedFrame>()
        let a = try EncoderSession(width: 176, height: 144, configuration: configuration, outputHandler: direct.handler)
        let b = try EncoderSession(width: 176, height: 144, configuration: configuration, outputHandler: copied.handler)
        for (i, frame) in decoded.enumerated() {
            let converted = try VideoFrame(frame)
            let reference = try Self.planeCopy(frame)
            #expect(converted.pixelFormat == .i420 && converted.width == 176 && converted.height == 144)
            #expect(converted.planes.map(Self.packed(converted)) == reference.planes.map(Self.packed(reference)), "frame \(i)")
            try a.encode(converted, presentationTimeStamp: .milliseconds(i * 40))
            try b.encode(reference, presentationTimeStamp: .milliseconds(i * 40))
        }
        try a.completeFrames()
        try b.completeFrames()
        #expect(direct.count == decoded.count)
        #expect(direct.all.map(\.data) == copied.all.map(\.data))
    }

    /// A picture in a layout no encoder takes is refused, naming the pixel format.
    @Test func aPictureInAnotherLayoutIsRefused() throws {
        struct Grey: EncodablePicture {
            var width: Int { 16 }
            var height: Int { 16 }
            var packedLayout: PackedPictureLayout? { nil }
            func packedBytes() -> [UInt8] { [UInt8](repeating: 0, count: 256) }
        }
        let error = #expect(throws: MediaError.self) { try VideoFrame(Grey()) }
        #expect(error?.code == .invalidFrame && error?.field == "pixelFormat")
    }

    /// The bytes of one plane's rows, without padding (the plane's geometry from the frame).
    static func packed(_ frame: VideoFrame) -> (VideoFrame.Plane) -> [UInt8] {
        { plane in
            let index = frame.planes.firstIndex { $0.offset == plane.offset && $0.bytesPerRow == plane.bytesPerRow } ?? 0
            let (rowBytes, rows) = VideoFrame.geometry(frame.pixelFormat, plane: index, width: frame.width, height: frame.height)
            return (0..<rows).flatMap { row in plane.storage[(plane.offset + row * plane.bytesPerRow)..<(plane.offset + row * plane.bytesPerRow + rowBytes)] }
        }
    }
}
