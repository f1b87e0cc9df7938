import Foundation
import H264
import MediaContainers
import H264TestSupport
import Testing

/// `Y4MFrameReader`, the reading loop around `Y4MReader`, against FFmpeg's reading of the same file, whatever sizes the source's reads
/// come in and whether the caller reuses its frame buffers (as `h264 encode` does).
@Suite(.ownThread, .timeLimit(.minutes(5))) struct Y4MFrameReaderTests {
    /// Committed fixture Fixtures/cars_320x240_30f.y4m (see Fixtures/PROVENANCE).
    static let path = TestFixtures.url("cars_320x240_30f.y4m").path

    /// FFmpeg's frames of the fixture, as raw I420.
    static func ffmpegFrames() throws -> [[UInt8]] {
        let result = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        try #require(result.status == 0, "\(result.stderr)")
        let size = 320 * 240 * 3 / 2
        try #require(result.stdout.count == 30 * size)
        return stride(from: 0, to: result.stdout.count, by: size).map { Array(result.stdout[$0..<($0 + size)]) }
    }

    @Test(arguments: [1, 7, 4096, 65_537, Int.max])
    func framesEqualFFmpegsInAnyReadSize(chunk: Int) throws {
        let expected = try Self.ffmpegFrames()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.path)))
        var reader = try Y4MFrameReader(y4m: BufferSource(bytes: bytes, chunk: chunk))
        #expect(reader.header.width == 320 && reader.header.height == 240)
        // Three buffers reused round robin; the frame read into one is compared before reuse.
        var pool = [[UInt8]](repeating: [], count: 3)
        var frames = 0
        while try reader.readFrame(into: &pool[frames % 3]) {
            #expect(frames < expected.count && pool[frames % 3] == expected[frames], "frame \(frames), reads of \(chunk) bytes")
            frames += 1
        }
        #expect(frames == 30)
        #expect(reader.bytesRead == bytes.count)
    }

    /// A buffer still held elsewhere (a queued frame) is copied, not overwritten.
    @Test func aBufferStillInUseIsNotOverwritten() throws {
        let expected = try Self.ffmpegFrames()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.path)))
        var reader = try Y4MFrameReader(y4m: BufferSource(bytes: bytes))
        var buffer: [UInt8] = []
        #expect(try reader.readFrame(into: &buffer))
        let held = buffer
        #expect(try reader.readFrame(into: &buffer))
        #expect(held == expected[0])
        #expect(buffer == expected[1])
    }

    /// FRAME lines with parameters, and raw I420 (no lines at all) in small reads.
    @Test func frameParametersAndRawInput() throws {
        let frame = (0..<(16 * 8 * 3 / 2)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let y4m = Array("YUV4MPEG2 W16 H8 F25:1\nFRAME Ip XKEY=1\n".utf8) + frame + Array("FRAME\n".utf8) + frame.reversed()
        var reader = try Y4MFrameReader(y4m: BufferSource(bytes: y4m, chunk: 3))
        #expect(try reader.nextFrame() == frame)
        #expect(try reader.nextFrame() == frame.reversed())
        #expect(try reader.nextFrame() == nil)

        var raw = Y4MFrameReader(rawI420: BufferSource(bytes: frame + frame.reversed(), chunk: 5), width: 16, height: 8,
                              frameRate: FrameRate(numerator: 30, denominator: 1))
        #expect(try raw.nextFrame() == frame)
        #expect(try raw.nextFrame() == frame.reversed())
        #expect(try raw.nextFrame() == nil)
        var short = Y4MFrameReader(rawI420: BufferSource(bytes: Array(frame.dropLast())), width: 16, height: 8,
                                frameRate: FrameRate(numerator: 30, denominator: 1))
        #expect((#expect(throws: MediaError.self) { try short.nextFrame() })?.code == .truncatedFrame)
    }
}
