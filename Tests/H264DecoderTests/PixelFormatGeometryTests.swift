import H264
@testable import H264Decoder
import H264TestSupport
import Testing

/// Plane geometry against the packed bytes (`av_image_copy_to_buffer`): for every pixel format
/// libavcodec outputs for H.264, the rows of each plane, ``DecodedFrame/Plane/rowByteCount``
/// bytes each, one plane after another, are ``DecodedFrame/packedBytes()``.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct PixelFormatGeometryTests {
    /// The rows of every plane, read in place with `withPlane`, concatenated.
    static func rows(of frame: DecodedFrame) -> [UInt8] {
        var bytes: [UInt8] = []
        for index in 0..<frame.planeCount {
            _ = frame.withPlane(index) { buffer, plane in
                for row in 0..<plane.height {
                    let start = row * plane.bytesPerRow
                    bytes += buffer[start..<(start + plane.rowByteCount)]
                }
            }
        }
        return bytes
    }

    /// Checks one frame's planes against its packed bytes and its description.
    static func checkPlanes(_ frame: DecodedFrame, _ comment: Comment) {
        let planes = frame.planes
        #expect(planes.count == frame.planeCount, comment)
        #expect(planes.reduce(0) { $0 + $1.rowByteCount * $1.height } == frame.packedByteCount, comment)
        for plane in planes {
            #expect(plane.rowByteCount == plane.width * plane.bytesPerPixel, comment)
            #expect(plane.rowByteCount <= plane.bytesPerRow, comment)
        }
        #expect(rows(of: frame) == frame.packedBytes(), comment)
    }

    /// A pixel format and what ``DecodedFrame`` reports for it.
    struct Format: Sendable, CustomTestStringConvertible {
        var name: String
        var layout: DecodedFrame.Layout
        var chroma: DecodedFrame.ChromaFormat
        var depth: Int
        var components: [[DecodedFrame.Component]]
        var testDescription: String { name }
    }

    static let yuv: [[DecodedFrame.Component]] = [[.luma], [.cb], [.cr]]

    /// libavcodec's H.264 output formats (h264_slice.c's choices: 8, 9, 10, 12, 14 bits; 4:2:0,
    /// 4:2:2, 4:4:4; YUV, the 8-bit full-range `yuvj`, GBR), the converted outputs, and the grey
    /// formats.
    static let formats: [Format] = {
        var formats: [Format] = []
        for depth in [8, 9, 10, 12, 14] {
            let suffix = depth == 8 ? "" : "\(depth)le"
            formats.append(Format(name: "gray\(suffix)", layout: .planar, chroma: .monochrome, depth: depth, components: [[.luma]]))
            for (sampling, chroma) in [("420", DecodedFrame.ChromaFormat.yuv420), ("422", .yuv422), ("444", .yuv444)] {
                formats.append(Format(name: "yuv\(sampling)p\(suffix)", layout: .planar, chroma: chroma, depth: depth, components: yuv))
                if depth == 8 {
                    formats.append(Format(name: "yuvj\(sampling)p", layout: .planar, chroma: chroma, depth: 8, components: yuv))
                }
            }
            formats.append(Format(name: "gbrp\(suffix)", layout: .planarGBR, chroma: .yuv444, depth: depth, components: [[.green], [.blue], [.red]]))
        }
        formats.append(Format(name: "nv12", layout: .semiPlanar, chroma: .yuv420, depth: 8, components: [[.luma], [.cb, .cr]]))
        formats.append(Format(name: "bgra", layout: .packedBGRA, chroma: .none, depth: 8, components: [[.blue, .green, .red, .alpha]]))
        return formats
    }()

    /// Synthetic frames of each format at odd and even sizes: description, components, and rows
    /// equal to the packed bytes.
    @Test(arguments: formats)
    func everyOutputFormatPacksItsPlanes(_ format: Format) throws {
        for (width, height) in [(1, 1), (2, 2), (33, 17), (64, 48)] {
            let frame = try #require(DecodedFrame(patternOf: format.name, width: width, height: height), "\(format.name)")
            let comment: Comment = "\(format.name) \(width)x\(height)"
            #expect(frame.pixelFormatName == format.name, comment)
            #expect(frame.layout == format.layout && frame.chromaFormat == format.chroma && frame.bitDepth == format.depth, comment)
            #expect(frame.planes.map(\.components) == format.components, comment)
            for plane in frame.planes where format.layout == .planar || format.layout == .planarGBR {
                #expect(plane.bytesPerPixel == (format.depth > 8 ? 2 : 1), comment)
            }
            #expect(frame.plane(frame.planeCount) == nil, comment)
            #expect(frame.packedByteCount > 0, comment)
            Self.checkPlanes(frame, comment)
        }
    }

    /// Formats the decoder never outputs for H.264, and that the description refuses rather than
    /// misdescribe: packed YUV, paletted, Cr-first, alpha planes, big-endian, 4:1:1, packed RGB
    /// other than B, G, R, A.
    @Test(arguments: ["yuyv422", "pal8", "nv21", "yuva420p", "gbrap", "yuv420p10be", "yuv411p", "rgb24", "rgba"])
    func formatsOutsideTheDescriptionAreRefused(_ name: String) {
        #expect(DecodedFrame(patternOf: name, width: 16, height: 16) == nil)
    }

    /// Decoded streams of each kind (and the forced output formats): every frame's planes read
    /// in place equal its packed bytes.
    @Test(arguments: [
        ("x264/high422_10bit_tff_80x44.264", DecoderConfiguration.OutputPixelFormat.native, "yuv422p10le"),
        ("x264/high444_cqmjvt_80x44.264", .native, "yuv444p"),
        ("x264/vui_hrd_high_160x96.264", .native, "yuvj420p"),
        ("conformance/CVFC1_Sony_C.jsv", .native, "yuv420p"),
        ("conformance/PPH10I1_Panasonic_A.264", .native, "yuv420p10le"),
        ("conformance/CVFC1_Sony_C.jsv", .nv12, "nv12"),
        ("conformance/CVFC1_Sony_C.jsv", .bgra, "bgra"),
        ("x264/high444_cqmjvt_80x44.264", .i420, "yuv420p"),
    ])
    func decodedPlanesAreThePackedBytes(_ stream: String, _ output: DecoderConfiguration.OutputPixelFormat, _ pixelFormat: String) throws {
        let configuration = DecoderConfiguration(threads: .count(1), outputPixelFormat: output)
        let frames = try DecoderTestSupport.decode(annexB: TestFixtures.data(stream), configuration: configuration, keep: true).frames
        #expect(!frames.isEmpty)
        for (index, frame) in frames.enumerated().prefix(4) {
            #expect(frame.pixelFormatName == pixelFormat)
            Self.checkPlanes(frame, "\(stream) \(output) frame \(index)")
        }
    }

    /// The decoder fuzz target's input that stopped it ("planes hold 48 bytes, packed 12"): fed
    /// as `DecoderTarget.swift` feeds it — the first 8 bytes seed the chunk sizes, the rest goes
    /// through `AnnexBDecoder` in those chunks into a one-thread session — with the target's
    /// property: every frame's planes hold its packed size. The frames are planar G, B, R with
    /// `matrix_coefficients` 0, as ffprobe reads the stream (`pix_fmt=gbrp`, `color_space=gbr`).
    @Test func fuzzRegressionGBR444() throws {
        let bytes = try TestFixtures.data("regressions/decoder-gbr-444-planes.bin")
        struct Seen: Sendable {
            var violations: [String] = []
            var frames: [DecodedFrame] = []
        }
        let seen = Locked(Seen())
        var generator: UInt64 = 0x9E37_79B9
        for byte in bytes.prefix(8) { generator = generator << 8 | UInt64(byte) }
        let stream = Array(bytes.dropFirst(8))
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1))) { frame in
            var total = 0
            var violations: [String] = []
            for index in 0..<frame.planeCount {
                _ = frame.withPlane(index) { buffer, plane in
                    if plane.rowByteCount > plane.bytesPerRow { violations.append("row longer than its stride") }
                    total += plane.rowByteCount * plane.height
                    return buffer.isEmpty ? 0 : Int(buffer[0]) + Int(buffer[buffer.count - 1])
                }
            }
            if total != frame.packedByteCount { violations.append("planes hold \(total) bytes, packed \(frame.packedByteCount)") }
            seen.withLock {
                $0.violations += violations
                $0.frames.append(frame)
            }
        }
        var decoder = AnnexBDecoder(session: session)
        var position = 0
        while position < stream.count {
            generator ^= generator << 13; generator ^= generator >> 7; generator ^= generator << 17
            let end = min(stream.count, position + Int((generator >> 8) % 2048) + 1)
            try decoder.append(stream[position..<end])
            position = end
        }
        try decoder.finish()
        try session.waitForAsynchronousFrames()
        session.invalidate()

        let (violations, frames) = seen.withLock { ($0.violations, $0.frames) }
        #expect(violations.isEmpty, "\(violations)")
        #expect(frames.count == 3)
        for frame in frames {
            #expect(frame.layout == .planarGBR && frame.pixelFormatName == "gbrp" && frame.chromaFormat == .yuv444 && frame.bitDepth == 8)
            #expect(frame.colorDescription.matrixCoefficients == 0)
            #expect(frame.planes.map(\.components) == [[.green], [.blue], [.red]])
            #expect(frame.packedByteCount == frame.width * frame.height * 3)
            Self.checkPlanes(frame, "gbrp \(frame.width)x\(frame.height)")
        }
    }
}
