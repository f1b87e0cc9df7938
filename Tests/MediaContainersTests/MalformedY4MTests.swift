import H264
import MediaContainers
import H264TestSupport
import Testing

/// The y4m part of the malformed-input catalogue: H264Media's reader names each problem with a
/// code and the header tag (or `FRAME` line) it is in. Headers follow the YUV4MPEG2 format as
/// FFmpeg writes it (`YUV4MPEG2 W.. H.. F..:.. Ip A..:.. C420jpeg`, then `FRAME\n` and the I420
/// planes).
@Suite(.ownThread, .timeLimit(.minutes(5))) struct MalformedY4MTests {
    static func y4m(_ header: String, frames: [Int] = []) -> [UInt8] {
        var bytes = Array((header + "\n").utf8)
        for size in frames { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: 0x80, count: size) }
        return bytes
    }

    /// 16x8 I420: 128 + 2 × 32 bytes.
    static let frameBytes = 16 * 8 * 3 / 2

    static let inputs: [(name: String, bytes: [UInt8], code: MediaError.Code, field: String?)] = [
        ("empty input", [], .emptyInput, nil),
        ("not YUV4MPEG2", y4m("YUV4MPEG W16 H8"), .notY4M, "YUV4MPEG2"),
        ("header without end of line", Array("YUV4MPEG2 W16 H8 F25:1".utf8), .truncatedHeader, "YUV4MPEG2"),
        ("header line over 4096 bytes", y4m("YUV4MPEG2 W16 H8 X" + String(repeating: "a", count: 4100)), .truncatedHeader, "YUV4MPEG2"),
        ("no width", y4m("YUV4MPEG2 H8 F25:1"), .missingDimension, "W"),
        ("no height", y4m("YUV4MPEG2 W16 F25:1"), .missingDimension, "H"),
        ("zero width", y4m("YUV4MPEG2 W0 H8"), .badDimension, "W"),
        ("width not a number", y4m("YUV4MPEG2 Wabc H8"), .badDimension, "W"),
        ("odd width for 4:2:0", y4m("YUV4MPEG2 W15 H8"), .badDimension, "W"),
        ("height above 16384", y4m("YUV4MPEG2 W16 H16386"), .badDimension, "H"),
        ("frame rate 0:1", y4m("YUV4MPEG2 W16 H8 F0:1"), .badFrameRate, "F"),
        ("frame rate without denominator", y4m("YUV4MPEG2 W16 H8 F25"), .badFrameRate, "F"),
        ("4:2:2 chroma", y4m("YUV4MPEG2 W16 H8 C422"), .unsupportedChroma, "C"),
        ("4:4:4 chroma", y4m("YUV4MPEG2 W16 H8 C444"), .unsupportedChroma, "C"),
        ("monochrome", y4m("YUV4MPEG2 W16 H8 Cmono"), .unsupportedChroma, "C"),
        ("12-bit 4:2:0", y4m("YUV4MPEG2 W16 H8 C420p12"), .unsupportedChroma, "C"),
        ("top field first", y4m("YUV4MPEG2 W16 H8 It"), .unsupportedInterlacing, "I"),
        ("a short last frame", y4m("YUV4MPEG2 W16 H8 F25:1 C420jpeg", frames: [frameBytes, frameBytes - 1]), .truncatedFrame, nil),
        ("frame line without FRAME", y4m("YUV4MPEG2 W16 H8") + Array("FRAMX\n".utf8) + [UInt8](repeating: 0, count: frameBytes), .badFrameHeader, "FRAME"),
        ("FRAME followed by other letters", y4m("YUV4MPEG2 W16 H8") + Array("FRAMES\n".utf8) + [UInt8](repeating: 0, count: frameBytes), .badFrameHeader, "FRAME"),
        ("frame line without end", y4m("YUV4MPEG2 W16 H8") + Array("FRAME Ixyz".utf8), .truncatedFrameHeader, "FRAME"),
        ("frame line over 1024 bytes", y4m("YUV4MPEG2 W16 H8") + Array(("FRAME X" + String(repeating: "k", count: 1100) + "\n").utf8), .truncatedFrameHeader, "FRAME"),
    ]

    static let cases: [MalformedCase] = inputs.map { input in
        MalformedCase(input.name, input.code, field: input.field) { _ = try Y4MStreamReader.frames(in: input.bytes) }
    }

    @Test(arguments: cases)
    func rejected(_ malformed: MalformedCase) {
        malformed.expectRejected()
    }

    /// The same error, at the same offset, whatever sizes the chunks come in.
    @Test(arguments: inputs.indices)
    func rejectedAlikeInChunks(index: Int) throws {
        let input = Self.inputs[index]
        let whole = #expect(throws: MediaError.self) { try Y4MStreamReader.frames(in: input.bytes) }
        for chunk in [1, 7, 100] {
            var reader = Y4MStreamReader()
            var caught: MediaError?
            do {
                for start in stride(from: 0, to: input.bytes.count, by: chunk) {
                    reader.append(input.bytes[start..<min(start + chunk, input.bytes.count)])
                    while try reader.nextFrame() != nil {}
                }
                reader.finish()
                while try reader.nextFrame() != nil {}
            } catch {
                caught = error
            }
            #expect(caught == whole, "\(input.name) in chunks of \(chunk)")
        }
    }

    /// The frames before a damaged one are delivered whole.
    @Test func framesBeforeAShortOneAreKept() throws {
        var reader = Y4MStreamReader()
        reader.append(Self.y4m("YUV4MPEG2 W16 H8 F25:1", frames: [Self.frameBytes, Self.frameBytes, 10]))
        reader.finish()
        #expect(try reader.nextFrame()?.count == Self.frameBytes)
        #expect(try reader.nextFrame()?.count == Self.frameBytes)
        let error = #expect(throws: MediaError.self) { try reader.nextFrame() }
        #expect(error?.code == .truncatedFrame)
        // Header (22 + 1), two frames of 6 + 192, the third's FRAME line and its 10 bytes.
        #expect(error?.byteOffset == 23 + 2 * (6 + Self.frameBytes) + 6 + 10)
    }

    /// Unknown tags are ignored, as FFmpeg's y4m demuxer ignores them; A and X are kept.
    @Test func unknownHeaderTagsAreIgnored() throws {
        let (header, frames) = try Y4MStreamReader.frames(in: Self.y4m("YUV4MPEG2 W16 H8 F25:1 Z9 XYSCSS=420JPEG A1:1", frames: [Self.frameBytes]))
        #expect(frames.count == 1 && frames[0].count == Self.frameBytes)
        #expect(header.extensions == ["YSCSS=420JPEG"])
        #expect(header.aspectNumerator == 1 && header.aspectDenominator == 1)
    }
}
