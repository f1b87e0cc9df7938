import H264
import H264Encoder
import H264TestSupport
import Testing

@Suite(.ownThread)
struct VideoFrameValidationTests {
    static let cases: [(String, Int, Int, [VideoFrame.Plane], VideoFrame.PixelFormat, String)] = [
        ("zero width", 0, 16, [], .i420, "size"),
        ("odd height", 16, 15, [], .i420, "size"),
        ("plane count", 16, 16, [.init(storage: [UInt8](repeating: 0, count: 384), bytesPerRow: 16)], .i420, "planes"),
        ("short stride", 16, 16, [.init(storage: [UInt8](repeating: 0, count: 256), bytesPerRow: 15),
                                  .init(storage: [UInt8](repeating: 0, count: 64), bytesPerRow: 8),
                                  .init(storage: [UInt8](repeating: 0, count: 64), bytesPerRow: 8)], .i420, "planes[0]"),
        ("small chroma", 16, 16, [.init(storage: [UInt8](repeating: 0, count: 256), bytesPerRow: 16),
                                  .init(storage: [UInt8](repeating: 0, count: 63), bytesPerRow: 8),
                                  .init(storage: [UInt8](repeating: 0, count: 64), bytesPerRow: 8)], .i420, "planes[1]"),
        ("nv12 small uv", 16, 16, [.init(storage: [UInt8](repeating: 0, count: 256), bytesPerRow: 16),
                                   .init(storage: [UInt8](repeating: 0, count: 100), bytesPerRow: 16)], .nv12, "planes[1]"),
        ("bgra stride", 16, 16, [.init(storage: [UInt8](repeating: 0, count: 1024), bytesPerRow: 60)], .bgra, "planes[0]"),
        ("offset past end", 16, 16, [.init(storage: [UInt8](repeating: 0, count: 1024), offset: 1, bytesPerRow: 64)], .bgra, "planes[0]"),
        ("huge stride", 16, 16, [.init(storage: [UInt8](repeating: 0, count: 1024), bytesPerRow: Int.max / 2)], .bgra, "planes[0]"),
    ]

    @Test(arguments: cases.indices)
    func invalidFramesThrow(index: Int) {
        let (name, w, h, planes, format, field) = Self.cases[index]
        let error = #expect(throws: MediaError.self, "\(name)") {
            try VideoFrame(pixelFormat: format, width: w, height: h, planes: planes)
        }
        #expect(error?.code == .invalidFrame, "\(name)")
        #expect(error?.field == field, "\(name)")
    }

    @Test func contiguousI420IsSharedNotCopied() throws {
        let bytes = [UInt8](repeating: 7, count: 16 * 16 * 3 / 2)
        let frame = try VideoFrame(pixelFormat: .i420, width: 16, height: 16, contiguous: bytes)
        #expect(frame.planes.map(\.offset) == [0, 256, 320])
        #expect(frame.planes.map(\.bytesPerRow) == [16, 8, 8])
        #expect(frame.planes.allSatisfy { $0.storage.withUnsafeBufferPointer { $0.baseAddress } == bytes.withUnsafeBufferPointer { $0.baseAddress } })
    }

    @Test func sessionRejectsBadSizes() {
        for (w, h) in [(0, 240), (320, 0), (321, 240), (320, 241), (-2, 4), (20_000, 2)] {
            #expect((#expect(throws: MediaError.self) { try EncoderSession(width: w, height: h) })?.code == .invalidFrame)
        }
    }
}

@Suite(.ownThread)
struct ConfigurationValidationTests {
    static let cases: [(String, @Sendable (inout EncoderConfiguration) -> Void)] = [
        ("level", { $0.level = .fixed(35) }),
        ("entropyMode", { $0.profile = .baseline; $0.entropyMode = .cabac }),
        ("averageBitRate", { $0.averageBitRate = 10 }),
        ("constantRateFactor", { $0.constantRateFactor = 52 }),
        ("constantRateFactor", { $0.constantRateFactor = 20; $0.averageBitRate = 1_000_000 }),
        ("dataRateLimits[1].seconds", { $0.dataRateLimits = [.init(bytes: 1000, seconds: 1), .init(bytes: 1000, seconds: 0)] }),
        ("dataRateLimits[0].bytes", { $0.dataRateLimits = [.init(bytes: -1, seconds: 1)] }),
        ("maxKeyFrameInterval", { $0.maxKeyFrameInterval = 0 }),
        ("maxKeyFrameIntervalDuration", { $0.maxKeyFrameIntervalDuration = .nan }),
        ("expectedFrameRate", { $0.expectedFrameRate = 0 }),
        ("threads", { $0.threads = -1 }),
    ]

    @Test(arguments: cases.indices)
    func invalidPropertyIsNamed(index: Int) throws {
        let (field, change) = Self.cases[index]
        var config = EncoderConfiguration()
        change(&config)
        let error = #expect(throws: MediaError.self) { try config.validate() }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.field == field)
        // configure() rejects it too and leaves the configuration unchanged.
        let session = try EncoderSession(width: 64, height: 64)
        #expect(throws: MediaError.self) { try session.configure(change) }
        #expect(session.configuration == EncoderConfiguration())
        #expect(session.state == .created)
    }

    @Test func keyframeIntervalSmallerWins() {
        var c = EncoderConfiguration()
        c.expectedFrameRate = 30
        c.maxKeyFrameInterval = 100
        c.maxKeyFrameIntervalDuration = 2
        #expect(c.effectiveMaxKeyFrameInterval == 60)
        c.maxKeyFrameInterval = 45
        #expect(c.effectiveMaxKeyFrameInterval == 45)
        c = EncoderConfiguration()
        #expect(c.effectiveMaxKeyFrameInterval == nil)
    }

    @Test func presetsAreValidAndDiffer() throws {
        let presets: [EncoderConfiguration] = [.liveCapture, .ultraLowLatency, .activeTranscoding, .backgroundTranscoding]
        for p in presets { try p.validate() }
        #expect(Set(presets).count == 4)
        #expect(EncoderConfiguration.ultraLowLatency.realTime && !EncoderConfiguration.ultraLowLatency.allowFrameReordering)
    }

    @Test func defaultBitRateIsTheRecommendation() throws {
        #expect(EncoderConfiguration().effectiveAverageBitRate(width: 1280, height: 720) == 3_000_000)
        var c = EncoderConfiguration()
        c.constantRateFactor = 23
        #expect(c.effectiveAverageBitRate(width: 1280, height: 720) == nil)
    }
}

/// The seed's table: under 500,000 pixels 1.5 Mbit/s, under 1,000,000 3 Mbit/s, under
/// 4,000,000 6 Mbit/s, else 20 Mbit/s, at 30 fps, linear in frame rate.
@Suite(.ownThread)
struct RecommendedBitRateTests {
    @Test(arguments: [
        (640, 360, 30.0, 1_500_000), (706, 706, 30.0, 1_500_000), (708, 708, 30.0, 3_000_000),
        (1280, 720, 30.0, 3_000_000), (1000, 1000, 30.0, 6_000_000), (1920, 1080, 30.0, 6_000_000),
        (2000, 2000, 30.0, 20_000_000), (3840, 2160, 30.0, 20_000_000),
        (1280, 720, 60.0, 6_000_000), (640, 360, 15.0, 750_000), (1920, 1080, 29.97, 5_994_000),
    ])
    func table(width: Int, height: Int, fps: Double, expected: Int) throws {
        #expect(try RecommendedBitRate.bitsPerSecond(width: width, height: height, frameRate: fps) == expected)
    }

    @Test func badInput() {
        #expect((#expect(throws: MediaError.self) { try RecommendedBitRate.bitsPerSecond(width: 0, height: 1) })?.code == .valueOutOfRange)
        #expect((#expect(throws: MediaError.self) { try RecommendedBitRate.bitsPerSecond(width: 1, height: 1, frameRate: .infinity) })?.code == .valueOutOfRange)
        #expect((#expect(throws: MediaError.self) { try RecommendedBitRate.bitsPerSecond(width: Int.max, height: 2) })?.code == .overflow)
        #expect((#expect(throws: MediaError.self) { try RecommendedBitRate.bitsPerSecond(width: 1, height: 1, frameRate: 1e300) })?.code == .overflow)
    }
}

@Suite(.ownThread)
struct AnnexBWriterTests {
    // Hand-made AVCC access unit: two NAL units (IDR slice header bytes 65 88, SEI-like 06 05).
    static let avcc: [UInt8] = [0, 0, 0, 2, 0x65, 0x88, 0, 0, 0, 3, 0x06, 0x05, 0x80]
    static let format = try! FormatDescription(sequenceParameterSets: [[0x67, 0x42, 0xC0, 0x1E, 0xAA]],
                                               pictureParameterSets: [[0x68, 0xCE, 0x38, 0x80]])

    func frame(_ type: EncodedFrame.FrameType, _ data: [UInt8] = avcc) -> EncodedFrame {
        EncodedFrame(data: data, presentationTimeStamp: .zero, decodeTimeStamp: .zero, duration: .zero,
                     frameType: type, formatDescription: Self.format, width: 16, height: 16)
    }

    @Test func idrGetsParameterSets() throws {
        let out = try AnnexBWriter().annexB(frame(.idr))
        #expect(out == [0, 0, 0, 1, 0x67, 0x42, 0xC0, 0x1E, 0xAA, 0, 0, 0, 1, 0x68, 0xCE, 0x38, 0x80,
                        0, 0, 0, 1, 0x65, 0x88, 0, 0, 0, 1, 0x06, 0x05, 0x80])
    }

    @Test func nonIDRHasNoParameterSets() throws {
        #expect(try AnnexBWriter().annexB(frame(.p)) == [0, 0, 0, 1, 0x65, 0x88, 0, 0, 0, 1, 0x06, 0x05, 0x80])
        #expect(try frame(.p).nalUnits().map(Array.init) == [[0x65, 0x88], [0x06, 0x05, 0x80]])
    }

    @Test(arguments: [([0, 0, 0, 9, 0x65], .lengthPastEnd), ([0, 0, 0, 1, 0x65, 0, 0], .truncated),
                      ([0, 0, 0xFF, 0xFF, 0xFF], .lengthPastEnd), ([0, 0, 0x01], .truncated)] as [([UInt8], MediaError.Code)])
    func malformedLengthsThrow(data: [UInt8], code: MediaError.Code) {
        // The one AVCC walk (AVCC.forEachNALUnit): a length past the end, or a length field cut short.
        var copy = data
        #expect((#expect(throws: MediaError.self) { try AnnexBWriter.convertLengthsToStartCodes(&copy) })?.code == code)
        #expect((#expect(throws: MediaError.self) { try AnnexBWriter().annexB(frame(.p, data)) })?.code == code)
        #expect((#expect(throws: MediaError.self) { try frame(.p, data).nalUnits() })?.code == code)
    }
}
