import Foundation
import H264
import H264Decoder
import MediaContainers
import H264TestSupport
import Testing
import RTP

/// `Y4MFrameWriter` and `RTPY4MWriter` (moved out of `h264 decode` and `h264 receive`): the y4m
/// they write, read back by FFmpeg, holds FFmpeg's own decoding of the stream frame for frame.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct Y4MFrameWriterTests {
    /// 176x144 4:2:0, an IDR picture mid-stream, no VUI timing (25 fps by ffprobe's guess).
    static let stream = "conformance/MIDR_MW_D.264"
    /// 352x288 4:2:0: another size.
    static let otherSize = "conformance/BA1_FT_C.264"

    /// FFmpeg's framemd5 of a y4m stream it reads from standard input.
    static func ffmpegFrames(y4m: [UInt8]) throws -> [FrameDigest] {
        let output = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-f", "yuv4mpegpipe", "-i", "-",
                                                         "-fps_mode", "passthrough", "-f", "framemd5", "-"], stdin: y4m)
        #expect(output.status == 0, "\(output.stderr)")
        return DecoderTestSupport.parseFramemd5(String(decoding: output.stdout, as: UTF8.self))
    }

    /// The first line of `bytes` (a y4m stream header), without its `\n`.
    static func headerLine(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }

    @Test("the frames written are FFmpeg's decoding; one stream header, one FRAME line a frame")
    func writesWhatFFmpegDecodes() throws {
        let frames = try DecoderTestSupport.decode(annexB: try TestFixtures.data(Self.stream), keep: true).frames
        var writer = Y4MFrameWriter()
        var y4m: [UInt8] = []
        for (index, frame) in frames.enumerated() {
            let bytes = try writer.bytes(of: frame, index: index, rate: FrameRate(numerator: 25, denominator: 1))
            #expect(bytes.starts(with: Array((index == 0 ? "YUV4MPEG2 " : "FRAME\n").utf8)))
            #expect(bytes.count == (index == 0 ? Self.headerLine(bytes).utf8.count + 1 : 0) + 6 + 176 * 144 * 3 / 2)
            y4m += bytes
        }
        #expect(writer.format?.width == 176 && writer.format?.height == 144)
        let header = Self.headerLine(y4m)
        #expect(header.contains(" W176 H144 ") && header.contains(" F25:1"), "\(header)")
        let expected = try DecoderTestSupport.ffmpegFrames(path: try TestFixtures.path(Self.stream))
        #expect(frames.count == expected.count)
        #expect(try Self.ffmpegFrames(y4m: y4m) == expected)
    }

    @Test("a frame of another size is y4mFormatChanged, naming the frame")
    func sizeChangeIsAnError() throws {
        let first = try #require(try DecoderTestSupport.decode(annexB: try TestFixtures.data(Self.stream), keep: true).frames.first)
        let other = try #require(try DecoderTestSupport.decode(annexB: try TestFixtures.data(Self.otherSize), keep: true).frames.first)
        var writer = Y4MFrameWriter()
        _ = try writer.bytes(of: first, index: 0, rate: FrameRate(numerator: 25, denominator: 1))
        let error = #expect(throws: MediaError.self) {
            try writer.bytes(of: other, index: 1, rate: FrameRate(numerator: 25, denominator: 1))
        }
        #expect(error?.code == .y4mFormatChanged)
        #expect(error?.field == "frame 1")
    }

    @Test("interleaved chroma (nv12) is y4mUnsupportedPixelFormat, and nothing is written")
    func unsupportedPixelFormat() throws {
        let configuration = DecoderConfiguration(threads: .count(1), outputPixelFormat: .nv12)
        let frame = try #require(try DecoderTestSupport.decode(annexB: try TestFixtures.data(Self.stream),
                                                               configuration: configuration, keep: true).frames.first)
        var writer = Y4MFrameWriter()
        let error = #expect(throws: MediaError.self) {
            try writer.bytes(of: frame, index: 0, rate: FrameRate(numerator: 25, denominator: 1))
        }
        #expect(error?.code == .y4mUnsupportedPixelFormat)
        #expect(writer.format == nil)
    }

    /// The stream's access units (decoding order), each packetized as RTP at 25 fps and
    /// depacketized again.
    static func receivedAccessUnits() throws -> [RTPDepacketizer.ReceivedAccessUnit] {
        var receiver = AccessUnitReceiver()
        var packetizer = RTPPacketizer()
        var depacketizer = RTPDepacketizer()
        var received: [RTPDepacketizer.ReceivedAccessUnit] = []
        var index = 0
        for event in receiver.receive(try TestFixtures.data(Self.stream)) + receiver.finish() {
            guard case .accessUnit(let unit) = event else { continue }
            try packetizer.packetize(avcc: unit.data, presentationTime: .milliseconds(40 * index),
                                     formatDescription: unit.formatDescription) { packet in
                packet.bytes().withUnsafeBytes { depacketizer.append(packet: $0) }
            }
            index += 1
            while let event = depacketizer.next() { if case .accessUnit(let unit) = event { received.append(unit) } }
        }
        depacketizer.finish()
        while let event = depacketizer.next() { if case .accessUnit(let unit) = event { received.append(unit) } }
        return received
    }

    @Test("RTPY4MWriter: FFmpeg's frames, at the rate of the RTP timestamps (no VUI timing)")
    func rtpWriterWritesEveryFrame() throws {
        let written = Locked<[UInt8]>([])
        let writer = try RTPY4MWriter(frames: nil) { bytes in written.withLock { $0 += bytes } }
        let units = try Self.receivedAccessUnits()
        for unit in units { try writer.decode(unit) }
        let summary = try writer.finish()
        let y4m = written.withLock { $0 }
        let expected = try DecoderTestSupport.ffmpegFrames(path: try TestFixtures.path(Self.stream))
        #expect(summary.frames == expected.count)
        #expect(summary.damaged == 0 && summary.skippedAccessUnits == 0)
        #expect(Self.headerLine(y4m).contains(" F25:1"), "\(Self.headerLine(y4m))")
        #expect(try Self.ffmpegFrames(y4m: y4m) == expected)
        #expect(!writer.done, "no frame limit")
    }

    @Test("RTPY4MWriter with frames: 5 writes the first five frames and is done")
    func rtpWriterStopsAtTheLimit() throws {
        let written = Locked<[UInt8]>([])
        let writer = try RTPY4MWriter(frames: 5) { bytes in written.withLock { $0 += bytes } }
        for unit in try Self.receivedAccessUnits() { try writer.decode(unit) }
        let summary = try writer.finish()
        #expect(writer.done)
        #expect(summary.frames == 5)
        let expected = try DecoderTestSupport.ffmpegFrames(path: try TestFixtures.path(Self.stream))
        #expect(try Self.ffmpegFrames(y4m: written.withLock { $0 }) == Array(expected.prefix(5)))
    }
}
