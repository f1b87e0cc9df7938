import AudioCodecs
import Foundation
import H264Decoder
import H264TestSupport
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
        #expect(frames.first?.presentationTime == .zero)
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
