import Foundation
import H264
import MediaContainers
import H264TestSupport
import Testing

/// H264Media's y4m reader against FFmpeg's reading of the same file, whatever sizes the chunks
/// come in; its header writer against the header FFmpeg's yuv4mpegpipe muxer writes.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct Y4MReaderTests {
    /// Committed fixture Fixtures/cars_320x240_30f.y4m (see Fixtures/PROVENANCE).
    static let fixture = "cars_320x240_30f.y4m"

    /// FFmpeg's frames of the fixture, as raw I420.
    static func ffmpegFrames() throws -> [[UInt8]] {
        let result = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try TestFixtures.path(fixture),
                                                   "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        try #require(result.status == 0, "\(result.stderr)")
        let size = 320 * 240 * 3 / 2
        try #require(result.stdout.count == 30 * size)
        return stride(from: 0, to: result.stdout.count, by: size).map { Array(result.stdout[$0..<($0 + size)]) }
    }

    @Test(arguments: [1, 7, 4096, 65_537, Int.max])
    func framesEqualFFmpegsInAnyChunkSize(chunk: Int) throws {
        let expected = try Self.ffmpegFrames()
        let bytes = try TestFixtures.data(Self.fixture)
        var reader = Y4MStreamReader()
        var frames: [[UInt8]] = []
        var start = 0
        while start < bytes.count {
            let end = start + min(chunk, bytes.count - start)
            reader.append(bytes[start..<end])
            start = end
            while let frame = try reader.nextFrame() { frames.append(frame) }
        }
        reader.finish()
        while let frame = try reader.nextFrame() { frames.append(frame) }
        #expect(reader.header?.width == 320 && reader.header?.height == 240)
        #expect(reader.header?.rate == FrameRate(numerator: 30, denominator: 1))
        #expect(frames.count == 30)
        #expect(frames == expected)
    }

    /// The step machine leaves the planes to the caller: it consumes only lines.
    @Test func stepsConsumeOnlyLines() throws {
        let planes = [UInt8](repeating: 7, count: 16 * 8 * 3 / 2)
        let bytes = Array("YUV4MPEG2 W16 H8 F25:1\nFRAME Ip XKEY=1\n".utf8) + planes
        var reader = Y4MReader()
        func step(_ slice: ArraySlice<UInt8>, isComplete: Bool = false) throws -> Y4MReader.Step {
            try slice.withUnsafeBytes { all in Result { () throws(MediaError) in try reader.step(all, isComplete: isComplete) } }.get()
        }
        #expect(try step(bytes[..<10]) == .needMoreBytes)
        #expect(try step(bytes[...]) == .header(consumed: 23))
        #expect(try step(bytes[23...]) == .frame(consumed: 16))
        #expect(reader.frameBytes == planes.count)
        #expect(try reader.endFrame(receivedBytes: planes.count))
        #expect(reader.framesRead == 1 && reader.bytesConsumed == bytes.count)
        #expect(try step([], isComplete: true) == .end)
    }

    /// Raw I420: no lines, frames back to back; a clean end after whole frames only.
    @Test func rawI420() throws {
        let frame = (0..<(16 * 8 * 3 / 2)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var reader = Y4MStreamReader(Y4MReader(rawI420: 16, height: 8, frameRate: FrameRate(numerator: 30, denominator: 1)))
        reader.append(frame + frame.reversed())
        reader.append(frame.prefix(5))
        #expect(try reader.nextFrame() == frame)
        #expect(try reader.nextFrame() == frame.reversed())
        #expect(try reader.nextFrame() == nil)
        reader.finish()
        #expect((#expect(throws: MediaError.self) { try reader.nextFrame() })?.code == .truncatedFrame)
    }

    /// The header `Y4MHeader.line` writes for the fixture is the one FFmpeg's muxer writes.
    @Test func headerLineIsFFmpegs() throws {
        let result = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try TestFixtures.path(Self.fixture),
                                                   "-frames:v", "1", "-f", "yuv4mpegpipe", "-"])
        try #require(result.status == 0, "\(result.stderr)")
        let ffmpegLine = String(decoding: result.stdout.prefix { $0 != 0x0A }, as: UTF8.self) + "\n"
        let header = Y4MHeader(width: 320, height: 240, frameRate: FrameRate(numerator: 30, denominator: 1),
                               colorspace: "420jpeg", aspectRatio: (0, 0), extensions: ["YSCSS=420JPEG"])
        #expect(header.line == ffmpegLine)
        // And it parses back to itself.
        #expect(try Y4MHeader.parse(Array(header.line.utf8.dropLast())) == header)
    }

    /// The tags FFmpeg's yuv4mpegpipe muxer (libavformat/yuv4mpegenc.c) writes per pixel format.
    @Test(arguments: [
        (1, 8, "420jpeg", "YSCSS=420JPEG"), (2, 8, "422", "YSCSS=422"), (3, 8, "444", "YSCSS=444"), (0, 8, "mono", nil),
        (1, 10, "420p10", "YSCSS=420P10"), (2, 12, "422p12", "YSCSS=422P12"), (3, 14, "444p14", "YSCSS=444P14"),
        (1, 9, "420p9", "YSCSS=420P9"), (0, 10, "mono10", nil), (0, 12, "mono12", nil),
    ] as [(Int, Int, String, String?)])
    func colourspaceTags(idc: Int, depth: Int, tag: String, extension: String?) {
        let mapped = Y4MHeader.colourspace(chromaFormatIdc: idc, bitDepth: depth)
        #expect(mapped?.colorspace == tag && mapped?.extension == `extension`)
    }

    /// What y4m cannot hold: grey at 14 bits, depths FFmpeg's muxer has no tag for.
    @Test(arguments: [(0, 14), (1, 11), (1, 16), (3, 7), (4, 8)])
    func formatsY4MCannotHold(idc: Int, depth: Int) {
        #expect(Y4MHeader.colourspace(chromaFormatIdc: idc, bitDepth: depth) == nil)
    }
}
