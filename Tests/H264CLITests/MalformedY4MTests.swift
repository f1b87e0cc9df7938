@testable import h264
import Testing

/// The y4m part of the malformed-input catalogue: `h264 encode`'s reader names each problem with
/// a `CLIError.Code`. Headers follow the YUV4MPEG2 format as FFmpeg writes it
/// (`YUV4MPEG2 W.. H.. F..:.. Ip A..:.. C420jpeg`, then `FRAME\n` and the I420 planes).
@Suite struct MalformedY4MTests {
    static func y4m(_ header: String, frames: [Int] = []) -> [UInt8] {
        var bytes = Array((header + "\n").utf8)
        for size in frames { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: 0x80, count: size) }
        return bytes
    }

    /// 16x8 I420: 128 + 2 × 32 bytes.
    static let frameBytes = 16 * 8 * 3 / 2

    static let cases: [(name: String, bytes: [UInt8], code: CLIError.Code)] = [
        ("empty input", [], .emptyInput),
        ("not YUV4MPEG2", y4m("YUV4MPEG W16 H8"), .notY4M),
        ("header without end of line", Array("YUV4MPEG2 W16 H8 F25:1".utf8), .truncatedHeader),
        ("no width", y4m("YUV4MPEG2 H8 F25:1"), .missingDimension),
        ("no height", y4m("YUV4MPEG2 W16 F25:1"), .missingDimension),
        ("zero width", y4m("YUV4MPEG2 W0 H8"), .badDimension),
        ("width not a number", y4m("YUV4MPEG2 Wabc H8"), .badDimension),
        ("odd width for 4:2:0", y4m("YUV4MPEG2 W15 H8"), .badDimension),
        ("height above 16384", y4m("YUV4MPEG2 W16 H16386"), .badDimension),
        ("frame rate 0:1", y4m("YUV4MPEG2 W16 H8 F0:1"), .badFrameRate),
        ("frame rate without denominator", y4m("YUV4MPEG2 W16 H8 F25"), .badFrameRate),
        ("4:2:2 chroma", y4m("YUV4MPEG2 W16 H8 C422"), .unsupportedChroma),
        ("4:4:4 chroma", y4m("YUV4MPEG2 W16 H8 C444"), .unsupportedChroma),
        ("monochrome", y4m("YUV4MPEG2 W16 H8 Cmono"), .unsupportedChroma),
        ("10-bit 4:2:0", y4m("YUV4MPEG2 W16 H8 C420p10"), .unsupportedChroma),
        ("top field first", y4m("YUV4MPEG2 W16 H8 It"), .unsupportedInterlacing),
        ("a short last frame", y4m("YUV4MPEG2 W16 H8 F25:1 C420jpeg", frames: [frameBytes, frameBytes - 1]), .truncatedFrame),
        ("frame line without FRAME", y4m("YUV4MPEG2 W16 H8") + Array("FRAMX\n".utf8) + [UInt8](repeating: 0, count: frameBytes), .badFrameHeader),
        ("frame line without end", y4m("YUV4MPEG2 W16 H8") + Array("FRAME Ixyz".utf8), .truncatedFrameHeader),
    ]

    @Test(arguments: cases.indices)
    func rejected(index: Int) {
        let c = Self.cases[index]
        do {
            var reader = try FrameReader(y4m: BufferSource(bytes: c.bytes))
            var frames = 0
            while try reader.nextFrame() != nil { frames += 1 }
            Issue.record("\(c.name): accepted \(frames) frame(s), expected \(c.code)")
        } catch let error as CLIError {
            #expect(error.code == c.code, "\(c.name): \(error)")
        } catch {
            Issue.record("\(c.name): \(error) is not a CLIError")
        }
    }

    /// The frames before a damaged one are delivered whole.
    @Test func framesBeforeAShortOneAreKept() throws {
        var reader = try FrameReader(y4m: BufferSource(bytes: Self.y4m("YUV4MPEG2 W16 H8 F25:1", frames: [Self.frameBytes, Self.frameBytes, 10])))
        #expect(try reader.nextFrame()?.count == Self.frameBytes)
        #expect(try reader.nextFrame()?.count == Self.frameBytes)
        #expect((#expect(throws: CLIError.self) { try reader.nextFrame() })?.code == .truncatedFrame)
    }

    /// Unknown and extension tags are ignored, as FFmpeg's y4m demuxer ignores them.
    @Test func unknownHeaderTagsAreIgnored() throws {
        var reader = try FrameReader(y4m: BufferSource(bytes: Self.y4m("YUV4MPEG2 W16 H8 F25:1 Z9 XYSCSS=420JPEG A1:1", frames: [Self.frameBytes])))
        #expect(try reader.nextFrame()?.count == Self.frameBytes)
        #expect(try reader.nextFrame() == nil)
    }
}
