import H264
import H264Encoder
import Testing
import H264TestSupport

/// The encoder's half of the malformed-input catalogue: each case asserts the error code and the
/// field (property, argument or plane) the session names.
@Suite(.ownThread) struct MalformedEncoderInputTests {
    typealias Case = MalformedCase

    static func plane(_ count: Int, stride: Int, offset: Int = 0) -> VideoFrame.Plane {
        VideoFrame.Plane(storage: [UInt8](repeating: 128, count: count), offset: offset, bytesPerRow: stride)
    }

    static func frame(width: Int = 64, height: Int = 48) throws(MediaError) -> VideoFrame {
        try VideoFrame(pixelFormat: .i420, width: width, height: height,
                       contiguous: [UInt8](repeating: 100, count: width * height * 3 / 2))
    }

    static func session(_ change: (inout EncoderConfiguration) -> Void = { _ in }) throws(MediaError) -> EncoderSession {
        var configuration = EncoderConfiguration.liveCapture
        change(&configuration)
        return try EncoderSession(width: 64, height: 48, configuration: configuration)
    }

    static let cases: [Case] = [
        // Frames: 64x48 I420 needs planes of 64x48, 32x24 and 32x24 bytes.
        Case("I420 luma plane one byte short", .invalidFrame, field: "planes[0]") {
            _ = try VideoFrame(pixelFormat: .i420, width: 64, height: 48,
                               planes: [plane(64 * 48 - 1, stride: 64), plane(32 * 24, stride: 32), plane(32 * 24, stride: 32)])
        },
        Case("I420 Cr plane one row short", .invalidFrame, field: "planes[2]") {
            _ = try VideoFrame(pixelFormat: .i420, width: 64, height: 48,
                               planes: [plane(64 * 48, stride: 64), plane(32 * 24, stride: 32), plane(32 * 23, stride: 32)])
        },
        Case("I420 luma stride shorter than a row", .invalidFrame, field: "planes[0]") {
            _ = try VideoFrame(pixelFormat: .i420, width: 64, height: 48,
                               planes: [plane(64 * 48, stride: 63), plane(32 * 24, stride: 32), plane(32 * 24, stride: 32)])
        },
        Case("NV12 with three planes", .invalidFrame, field: "planes") {
            _ = try VideoFrame(pixelFormat: .nv12, width: 64, height: 48,
                               planes: [plane(64 * 48, stride: 64), plane(32 * 24, stride: 32), plane(32 * 24, stride: 32)])
        },
        Case("NV12 chroma stride of half a row", .invalidFrame, field: "planes[1]") {
            _ = try VideoFrame(pixelFormat: .nv12, width: 64, height: 48, planes: [plane(64 * 48, stride: 64), plane(64 * 24, stride: 32)])
        },
        Case("negative plane offset", .invalidFrame, field: "planes[0]") {
            _ = try VideoFrame(pixelFormat: .bgra, width: 64, height: 48, planes: [plane(64 * 48 * 4, stride: 256, offset: -1)])
        },
        Case("stride whose product overflows", .invalidFrame, field: "planes[0]") {
            _ = try VideoFrame(pixelFormat: .bgra, width: 64, height: 48, planes: [plane(64 * 48 * 4, stride: Int.max / 8)])
        },
        Case("frame of zero width", .invalidFrame, field: "size") {
            _ = try VideoFrame(pixelFormat: .i420, width: 0, height: 48, contiguous: [])
        },
        Case("frame of odd height", .invalidFrame, field: "size") {
            _ = try VideoFrame(pixelFormat: .i420, width: 64, height: 47, contiguous: [UInt8](repeating: 0, count: 64 * 47 * 2))
        },
        Case("frame wider than 16384", .invalidFrame, field: "size") {
            _ = try VideoFrame(pixelFormat: .i420, width: 16_386, height: 2, contiguous: [UInt8](repeating: 0, count: 16_386 * 3))
        },
        Case("session of zero height", .invalidFrame, field: "size") {
            _ = try EncoderSession(width: 64, height: 0)
        },
        Case("session of odd width", .invalidFrame, field: "size") {
            _ = try EncoderSession(width: 63, height: 48)
        },
        Case("session larger than 16384", .invalidFrame, field: "size") {
            _ = try EncoderSession(width: 32_768, height: 16)
        },
        Case("session of negative size", .invalidFrame, field: "size") {
            _ = try EncoderSession(width: -64, height: -48)
        },
        // Configuration.
        Case("negative bit rate", .invalidConfiguration, field: "averageBitRate") {
            _ = try session { $0.averageBitRate = -1_000_000 }
        },
        Case("negative bit rate set live", .invalidConfiguration, field: "averageBitRate") {
            let s = try session { $0.averageBitRate = 500_000 }
            defer { s.invalidate() }
            try s.setAverageBitRate(-1)
        },
        Case("zero frame rate", .invalidConfiguration, field: "expectedFrameRate") {
            _ = try session { $0.expectedFrameRate = 0 }
        },
        Case("NaN frame rate", .invalidConfiguration, field: "expectedFrameRate") {
            _ = try session { $0.expectedFrameRate = .nan }
        },
        Case("negative data rate limit", .invalidConfiguration, field: "dataRateLimits[0].bytes") {
            _ = try session { $0.dataRateLimits = [.init(bytes: -8, seconds: 1)] }
        },
        // Time stamps and lifecycle.
        Case("time stamps going backwards", .invalidTimestamp, field: "presentationTimeStamp") {
            let s = try session()
            defer { s.invalidate() }
            try s.encode(frame(), presentationTimeStamp: .milliseconds(100))
            try s.encode(frame(), presentationTimeStamp: .milliseconds(66))
        },
        Case("the same time stamp twice", .invalidTimestamp, field: "presentationTimeStamp") {
            let s = try session()
            defer { s.invalidate() }
            try s.encode(frame(), presentationTimeStamp: .zero)
            try s.encode(frame(), presentationTimeStamp: .zero)
        },
        Case("encode after invalidate", .invalidState, field: nil) {
            let s = try session()
            s.invalidate()
            try s.encode(frame(), presentationTimeStamp: .zero)
        },
        Case("completeFrames after invalidate", .invalidState, field: nil) {
            let s = try session()
            try s.encode(frame(), presentationTimeStamp: .zero)
            s.invalidate()
            try s.completeFrames()
        },
        Case("rate change after invalidate", .invalidState, field: nil) {
            let s = try session { $0.averageBitRate = 500_000 }
            s.invalidate()
            try s.setAverageBitRate(400_000)
        },
        Case("switch without a prewarmed session", .invalidState, field: nil) {
            let s = try session()
            defer { s.invalidate() }
            try s.switchToPrewarmedSession()
        },
    ]

    @Test(arguments: Self.cases)
    func rejected(_ c: Case) {
        c.expectRejected()
    }

    /// A rejected time stamp leaves the session usable: the next later frame is encoded.
    @Test func aRejectedTimestampDoesNotStopTheSession() throws {
        let s = try Self.session()
        try s.encode(Self.frame(), presentationTimeStamp: .milliseconds(100))
        #expect(throws: MediaError.self) { try s.encode(Self.frame(), presentationTimeStamp: .milliseconds(50)) }
        try s.encode(Self.frame(), presentationTimeStamp: .milliseconds(133))
        try s.completeFrames()
        s.invalidate()
    }
}
