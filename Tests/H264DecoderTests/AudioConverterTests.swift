import AudioCodecs
import Foundation
import H264Decoder
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// `AudioConverter`: G.711 from a camera converted to AAC-LC for outputs that carry only AAC
/// (RTMP, FLV), checked by FFmpeg decoding the result.
struct AudioConverterTests {
    /// FFmpeg's 440 Hz sine at 8 kHz as G.711 (`-f alaw` / `-f mulaw`), cut into 20 ms frames as a
    /// camera sends them (160 bytes), converted, written as ADTS: FFmpeg decodes it without an
    /// error line, the tone's level is the source's within 1 dB, and no sample is lost.
    @Test(arguments: [(AudioCodec.pcma, "alaw"), (.pcmu, "mulaw")])
    func g711BecomesAACFFmpegDecodesAtTheSourcesLevel(codec: AudioCodec, ffmpegFormat: String) throws {
        let source = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:r=8000:d=2",
                                                   "-c:a", "pcm_\(ffmpegFormat)", "-f", ffmpegFormat, "-"])
        try #require(source.status == 0 && source.stdout.count == 16_000, "\(source.stderr)")
        let format = AudioFormatDescription(codec: codec, sampleRate: 8_000, channelCount: 1)
        let converter = try AudioConverter(from: format)
        #expect(converter.outputFormat.codec == .aac && converter.outputFormat.sampleRate == 8_000 && converter.outputFormat.channelCount == 1)
        var frames: [CompressedFrame] = []
        for (index, start) in stride(from: 0, to: source.stdout.count, by: 160).enumerated() {
            let frame = CompressedFrame(data: Array(source.stdout[start..<min(start + 160, source.stdout.count)]), format: format,
                                        presentationTime: .milliseconds(20 * index))
            frames += try converter.convert(frame)
        }
        frames += try converter.finish()
        // 16,000 samples in 1024-sample frames, plus the encoder's priming frame.
        #expect(frames.count >= 16 && frames.count <= 18, "\(frames.count) frames")
        // The priming frame one frame (1024 samples) before the first input sample.
        #expect(frames.first?.presentationTime == .milliseconds(-128))
        #expect(frames.allSatisfy { $0.audioFormat == converter.outputFormat })
        let config = try AudioSpecificConfig(converter.outputFormat.magicCookie)
        var adts: [UInt8] = []
        for frame in frames { adts += try #require(config.adtsHeader(frameLength: frame.data.count)) + frame.data }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audio-converter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.aac"), input = directory.appendingPathComponent("in.raw")
        try Data(adts).write(to: output)
        try Data(source.stdout).write(to: input)
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output.path, "-f", "s16le", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(decoded.stdout.count / 2 >= 16_000, "\(decoded.stdout.count / 2) samples decoded")
        let ours = try Self.maximumVolume(["-i", output.path]), theirs = try Self.maximumVolume(["-f", ffmpegFormat, "-ar", "8000", "-i", input.path])
        #expect(abs(ours - theirs) <= 1, "AAC \(ours) dB, source \(theirs) dB")
    }

    /// FFmpeg's 440 Hz sine at 48 kHz stereo encoded by libopus (`-f ogg`), its Opus packets taken
    /// out of the Ogg pages (RFC 7845: the first two packets are `OpusHead` and `OpusTags`),
    /// 20 ms each as RFC 7587 sends them: converted to AAC, FFmpeg decodes it without an error line
    /// at the source's level within 1 dB.
    @Test func opusBecomesAACFFmpegDecodesAtTheSourcesLevel() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audio-converter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ogg = directory.appendingPathComponent("in.ogg"), output = directory.appendingPathComponent("out.aac")
        let made = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:r=48000:d=2", "-ac", "2",
                                                 "-c:a", "libopus", "-frame_duration", "20", ogg.path])
        try #require(made.status == 0, "\(made.stderr)")
        let packets = try Self.oggPackets([UInt8](Data(contentsOf: ogg)))
        try #require(packets.count > 2 && packets[0].starts(with: Array("OpusHead".utf8)), "\(packets.count) packets")
        let format = AudioFormatDescription(codec: .opus, sampleRate: 48_000, channelCount: 2, magicCookie: packets[0])
        let converter = try AudioConverter(from: format)
        var frames: [CompressedFrame] = []
        for (index, packet) in packets.dropFirst(2).enumerated() {
            frames += try converter.convert(CompressedFrame(data: packet, format: format, presentationTime: .milliseconds(20 * index)))
        }
        frames += try converter.finish()
        #expect(converter.outputFormat.sampleRate == 48_000 && converter.outputFormat.channelCount == 2)
        #expect(frames.count >= 93, "\(frames.count) frames") // 2 s at 48 kHz in 1024-sample frames
        let config = try AudioSpecificConfig(converter.outputFormat.magicCookie)
        var adts: [UInt8] = []
        for frame in frames { adts += try #require(config.adtsHeader(frameLength: frame.data.count)) + frame.data }
        try Data(adts).write(to: output)
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output.path, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let ours = try Self.maximumVolume(["-i", output.path]), theirs = try Self.maximumVolume(["-i", ogg.path])
        #expect(abs(ours - theirs) <= 1, "AAC \(ours) dB, Opus \(theirs) dB")
    }

    /// The packets of an Ogg stream of one logical bitstream (RFC 3533): each page's segment
    /// table, segments joined until one shorter than 255 bytes ends a packet.
    static func oggPackets(_ bytes: [UInt8]) throws -> [[UInt8]] {
        var packets: [[UInt8]] = [], current: [UInt8] = [], offset = 0
        while offset + 27 <= bytes.count {
            try #require(bytes[offset..<offset + 4].elementsEqual(Array("OggS".utf8)), "no page at \(offset)")
            let segments = Int(bytes[offset + 26])
            var body = offset + 27 + segments
            for index in 0..<segments {
                let length = Int(bytes[offset + 27 + index])
                try #require(body + length <= bytes.count)
                current += bytes[body..<body + length]
                body += length
                if length < 255 { packets.append(current); current = [] }
            }
            offset = body
        }
        return packets
    }

    /// A format the converter does not take: AAC itself.
    @Test func aacInIsRefused() {
        #expect { try AudioConverter(from: AudioSpecificConfig(samplingFrequency: 48_000, channelConfiguration: 2).formatDescription) }
            throws: { ($0 as? MediaError)?.code == .unsupported }
    }

    /// FFmpeg's `volumedetect` maximum in dB of the input `arguments` name.
    static func maximumVolume(_ arguments: [String]) throws -> Double {
        let run = try Subprocess.run("ffmpeg", ["-nostdin", "-hide_banner", "-nostats"] + arguments + ["-af", "volumedetect", "-f", "null", "-"])
        let line = try #require(run.stderr.split(separator: "\n").first { $0.contains("max_volume:") })
        let value = line.split(separator: "max_volume:").last?.split(separator: " ").first.map(String.init) ?? ""
        return try #require(Double(value), "\(line)")
    }
}

/// What carries video only passes audio frames over: they come in the same event case.
struct AudioFramesPassedOverTests {
    static let audio = CompressedFrame(data: [0x21, 0x10, 0x04], format: AudioSpecificConfig(samplingFrequency: 48_000, channelConfiguration: 2).formatDescription,
                                       presentationTime: .milliseconds(5))

    /// `DecoderSession.decode(_:)` of an audio frame: nothing thrown, nothing decoded.
    @Test func aDecoderSessionPassesAnAudioFrameOver() async throws {
        let decoded = Locked(0)
        let session = try DecoderSession(format: nil, configuration: .init(codec: .h264)) { _ in decoded.withLock { $0 += 1 } }
        defer { session.invalidate() }
        try session.decode(Self.audio)
        try session.waitForAsynchronousFrames()
        let count = decoded.withLock { $0 }
        #expect(count == 0)
    }

    /// `ReceivedAnnexBWriter` (what `receive -o x.264` writes with) takes no audio frame.
    @Test func theAnnexBWriterTakesNoAudioFrame() throws {
        var writer = ReceivedAnnexBWriter(format: nil)
        let taken = writer.take(Self.audio)
        #expect(!taken)
        #expect(try writer.annexB(Self.audio).isEmpty)
        #expect(writer.written == 0 && writer.skipped == 0)
    }
}
