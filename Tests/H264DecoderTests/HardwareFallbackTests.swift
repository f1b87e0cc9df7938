import H264
import H264Decoder
import H264TestSupport
import Logging
import Testing

/// Collects log messages (swift-log handler).
struct CapturingLogHandler: LogHandler {
    let messages: Locked<[(Logger.Level, String)]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        messages.withLock { $0.append((event.level, "\(event.message)")) }
    }
}

/// Hardware decoding through libavcodec's hwaccel: on a machine without the device (CI, this
/// test host) the session falls back to software with one log line, and decodes FFmpeg's frames.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HardwareFallbackTests {
    @Test(arguments: DecoderConfiguration.HardwareAcceleration.allCases)
    func fallsBackToSoftware(_ device: DecoderConfiguration.HardwareAcceleration) throws {
        let bytes = try TestFixtures.data("conformance/BA_MW_D.264")
        let software = try DecoderTestSupport.decode(annexB: bytes)
        software.session.invalidate()

        let messages = Locked<[(Logger.Level, String)]>([])
        let logger = Logger(label: "test") { _ in CapturingLogHandler(messages: messages) }
        let out = Locked<[FrameDigest]>([])
        let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1), hardwareAcceleration: device),
                                         logger: logger) { f in out.withLock { $0.append(FrameDigest(size: f.packedByteCount, md5: f.md5())) } }
        var decoder = AnnexBDecoder(session: session)
        try decoder.append(bytes)
        try decoder.finish()
        let inUse = session.hardwareAccelerationInUse
        session.invalidate()
        let lines = messages.withLock { $0 }.filter { $0.1.contains("software") }
        if inUse == nil {
            // No device here (the usual case in CI): software, said once, FFmpeg's frames exactly.
            #expect(out.withLock { $0 } == software.digests)
            #expect(lines.count == 1)
            #expect(lines.first?.0 == .warning)
            #expect(lines.first?.1.contains(device.rawValue) == true)
        } else {
            // A device opened: every frame still comes out, and no fallback was reported.
            #expect(inUse == device)
            #expect(out.withLock { $0 }.count == software.digests.count)
            #expect(lines.isEmpty)
        }
    }
}
