import Foundation
import Testing
import H264
@testable import H264Encoder
import H264TestSupport

/// The cars clip: `Fixtures/cars_320x240_30f.y4m` (see Fixtures/PROVENANCE), 30 frames of 8-bit
/// I420 at 320×240. Reading it throws ``FixtureMissing`` naming the file when it is not there.
enum Cars {
    static let width = 320, height = 240, frameCount = 30
    static let frameBytes = width * height * 3 / 2
    private static let loaded = Result { try TestFixtures.y4mFrames("cars_320x240_30f.y4m").frames }
    /// The 30 frames.
    static var frames: [[UInt8]] { get throws { try loaded.get() } }

    private static let loaded640x360 = Result { () throws -> [[UInt8]] in
        let result = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", TestFixtures.path("cars_320x240_30f.y4m"),
                                             "-vf", "scale=640:360", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let size = 640 * 360 * 3 / 2
        guard result.status == 0, result.stdout.count == 30 * size else {
            throw FixtureMissing(relativePath: "cars_320x240_30f.y4m", reason: "ffmpeg could not scale it to 640x360: \(result.stderr)")
        }
        return stride(from: 0, to: result.stdout.count, by: size).map { Array(result.stdout[$0..<($0 + size)]) }
    }
    /// The clip scaled to 640×360 by FFmpeg (bicubic), 30 frames.
    static var frames640x360: [[UInt8]] { get throws { try loaded640x360.get() } }

    /// Frame `i` of a ping-pong loop over `frames` (0…29, 28…1, 0…): motion without cuts.
    static func pingPong(_ frames: [[UInt8]], _ i: Int) -> [UInt8] {
        let period = 2 * frames.count - 2
        let k = i % period
        return frames[k < frames.count ? k : period - k]
    }
}

enum InputFormat: String, CaseIterable, CustomTestStringConvertible {
    case i420, nv12, bgra
    var testDescription: String { rawValue }
}


/// Makes a frame of `format` from I420 bytes: NV12 interleaves the chroma; BGRA converts with
/// the BT.601 limited-range equations (the inverse of what libyuv applies).
func makeFrame(_ i420: [UInt8], width: Int, height: Int, format: InputFormat) throws -> VideoFrame {
    let luma = width * height
    switch format {
    case .i420:
        return try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: i420)
    case .nv12:
        var bytes = Array(i420[0..<luma])
        bytes.reserveCapacity(luma * 3 / 2)
        for i in 0..<(luma / 4) {
            bytes.append(i420[luma + i])
            bytes.append(i420[luma + luma / 4 + i])
        }
        return try VideoFrame(pixelFormat: .nv12, width: width, height: height, contiguous: bytes)
    case .bgra:
        var bytes = [UInt8](repeating: 255, count: luma * 4)
        for y in 0..<height {
            for x in 0..<width {
                let c = (y / 2) * (width / 2) + x / 2
                let Y = Double(i420[y * width + x]) - 16
                let U = Double(i420[luma + c]) - 128
                let V = Double(i420[luma + luma / 4 + c]) - 128
                func clamp(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }
                let o = (y * width + x) * 4
                bytes[o] = clamp(1.164 * Y + 2.018 * U)
                bytes[o + 1] = clamp(1.164 * Y - 0.391 * U - 0.813 * V)
                bytes[o + 2] = clamp(1.164 * Y + 1.596 * V)
            }
        }
        return try VideoFrame(pixelFormat: .bgra, width: width, height: height, contiguous: bytes)
    }
}

/// Runs command-line tools (FFmpeg, the reference decoder).
enum Tool {
    struct Output { var stdout: [UInt8]; var stderr: String; var status: Int32 }

    static func run(_ tool: String, _ arguments: [String], stdin: [UInt8]? = nil) throws -> Output {
        let output = try Subprocess.run(tool, arguments, stdin: stdin)
        return Output(stdout: output.stdout, stderr: output.stderr, status: output.status)
    }

    /// Decodes an Annex-B stream with FFmpeg to raw I420; returns the frames and FFmpeg's errors.
    static func decode(_ annexB: [UInt8], width: Int, height: Int) throws -> (frames: [[UInt8]], errors: String) {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", "-", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], stdin: annexB)
        let size = width * height * 3 / 2
        let frames = stride(from: 0, to: result.stdout.count - size + 1, by: size).map { Array(result.stdout[$0..<($0 + size)]) }
        return (frames, result.stderr)
    }

    /// FFprobe's `profile` of the stream.
    static func profile(_ annexB: [UInt8]) throws -> String {
        let result = try run("ffprobe", ["-v", "error", "-f", "h264", "-select_streams", "v:0", "-show_entries", "stream=profile",
                                         "-of", "default=nw=1:nk=1", "-"], stdin: annexB)
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// FFprobe's decoded frame sizes in order.
    static func frameSizes(_ annexB: [UInt8]) throws -> [String] {
        let result = try run("ffprobe", ["-v", "error", "-f", "h264", "-select_streams", "v:0", "-show_entries", "frame=width,height",
                                         "-of", "csv=p=0", "-"], stdin: annexB)
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

func annexB(_ frames: [EncodedFrame]) throws -> [UInt8] {
    var out: [UInt8] = []
    let writer = AnnexBWriter()
    for frame in frames { try writer.append(frame, to: &out) }
    return out
}

/// Encodes frames (I420 bytes) at 30 fps and completes; returns the outputs.
func encode(_ frames: [[UInt8]], width: Int, height: Int, configuration: EncoderConfiguration,
            format: InputFormat = .i420, forceKeyframeAt: Set<Int> = []) throws -> [EncodedFrame] {
    let collector = Collector<EncodedFrame>()
    let session = try EncoderSession(width: width, height: height, configuration: configuration, outputHandler: collector.handler)
    for (i, bytes) in frames.enumerated() {
        try session.encode(makeFrame(bytes, width: width, height: height, format: format),
                           presentationTimeStamp: .milliseconds(i * 100) / 3, duration: .milliseconds(100) / 3,
                           forceKeyframe: forceKeyframeAt.contains(i))
    }
    try session.completeFrames()
    session.invalidate()
    return collector.all
}

func frameIndex(_ frame: EncodedFrame) -> Int {
    Int(((frame.presentationTimeStamp * 30) / .seconds(1)).rounded())
}
