import H264
import H264Decoder
import H264TestSupport
import Testing

/// Forced 8-bit output formats (libyuv) against the native frames of the same stream.
@Suite(.ownThread) struct OutputPixelFormatTests {
    static func frames(_ stream: String, _ format: DecoderConfiguration.OutputPixelFormat) throws -> [DecodedFrame] {
        try DecoderTestSupport.decode(annexB: TestFixtures.data("conformance/\(stream)"),
                                      configuration: DecoderConfiguration(threads: .count(1), outputPixelFormat: format), keep: true).frames
    }

    @Test func i420PassesThroughEightBit420() throws {
        let native = try Self.frames("CVFC1_Sony_C.jsv", .native)
        let i420 = try Self.frames("CVFC1_Sony_C.jsv", .i420)
        #expect(!native.isEmpty)
        #expect(i420.map { $0.md5() } == native.map { $0.md5() })
    }

    @Test func nv12InterleavesTheChroma() throws {
        let native = try Self.frames("BA_MW_D.264", .native)
        let nv12 = try Self.frames("BA_MW_D.264", .nv12)
        #expect(nv12.count == native.count)
        for (n, v) in zip(native, nv12).prefix(5) {
            #expect(v.layout == .semiPlanar && v.planeCount == 2 && v.pixelFormatName == "nv12")
            let p = n.packedBytes(), q = v.packedBytes()
            let luma = n.width * n.height, chroma = n.chromaWidth * n.chromaHeight
            var expected = Array(p[0..<luma])
            for i in 0..<chroma { expected += [p[luma + i], p[luma + chroma + i]] }
            #expect(q == expected)
        }
    }

    @Test func i420FromTenBit() throws {
        let native = try Self.frames("PPH10I1_Panasonic_A.264", .native)
        let i420 = try Self.frames("PPH10I1_Panasonic_A.264", .i420)
        #expect(i420.count == native.count && !native.isEmpty)
        let n = try #require(native.first), v = try #require(i420.first)
        #expect(n.bitDepth == 10 && v.bitDepth == 8 && v.pixelFormatName == "yuv420p")
        let wide = n.packedBytes(), narrow = v.packedBytes()
        #expect(narrow.count == wide.count / 2)
        var worst = 0
        for i in stride(from: 0, to: narrow.count, by: 97) {
            let sample = Int(wide[2 * i]) | Int(wide[2 * i + 1]) << 8
            worst = max(worst, abs(sample / 4 - Int(narrow[i])))
        }
        #expect(worst <= 1)
    }

    @Test func bgraKeepsTheLuma() throws {
        let native = try Self.frames("BA_MW_D.264", .native)
        let bgra = try Self.frames("BA_MW_D.264", .bgra)
        let n = try #require(native.first), v = try #require(bgra.first)
        #expect(v.layout == .packedBGRA && v.planeCount == 1 && v.chromaFormat == .none)
        let y = n.packedBytes(), rgb = v.packedBytes()
        #expect(rgb.count == n.width * n.height * 4)
        var total = 0.0
        for i in 0..<(n.width * n.height) {
            let b = Double(rgb[4 * i]), g = Double(rgb[4 * i + 1]), r = Double(rgb[4 * i + 2])
            let luma = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
            total += abs(luma - Double(y[i]))
        }
        #expect(total / Double(n.width * n.height) < 2.5)
    }
}
