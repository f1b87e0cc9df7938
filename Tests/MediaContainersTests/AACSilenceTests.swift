import AudioCodecs
import Foundation
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// `AACSilence`: the bits of ISO/IEC 14496-3 4.4.2.1 written out by hand here, and FFmpeg's
/// decoding of 100 such frames in an FLV file — no error line, and the loudest sample at
/// −91.0 dB (FFmpeg's `volumedetect` figure for all-zero 16-bit samples).
@Suite(.ownThread) struct AACSilenceTests {
    /// Mono: `ID_SCE` 000, tag 0000, `global_gain` 100 = 01100100, `ics_info` 0 00 0 000000 0,
    /// no pulse/TNS/gain control 000, `ID_END` 111 → 00C8 0007. Stereo: `ID_CPE` 001, tag 0000,
    /// `common_window` 0, two such channel streams (22 bits each), `ID_END`, one zero bit →
    /// 2064 0001 9000 0E.
    @Test(arguments: [(1, [UInt8]([0x00, 0xC8, 0x00, 0x07])), (2, [0x20, 0x64, 0x00, 0x01, 0x90, 0x00, 0x0E])])
    func frameBits(channelConfiguration: Int, expected: [UInt8]) throws {
        #expect(try AACSilence.frame(channelConfiguration: channelConfiguration) == expected)
    }

    /// 100 silent frames at 44.1 kHz in an FLV file decode without an error line, to 102,400
    /// samples per channel whose maximum volume is −91.0 dB.
    @Test(arguments: [1, 2])
    func ffmpegDecodesSilence(channelConfiguration: Int) throws {
        let format = AudioSpecificConfig(samplingFrequency: 44_100, channelConfiguration: channelConfiguration).formatDescription
        let frame = try AACSilence.frame(channelConfiguration: channelConfiguration)
        var writer = FLVWriter(header: FLVFileHeader(hasAudio: true, hasVideo: false))
        try writer.appendAudioSequenceHeader(format)
        for index in 0..<100 {
            try writer.appendAudioFrame(frame, format: format, timestamp: Int64(index) * 1024 * 1000 / 44_100)
        }
        let path = FLVAudioPeerTests.temporaryPath(".flv")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))
        let errors = try FLVAudioPeerTests.decodingErrors(path)
        #expect(errors == [], "\(errors)")
        let result = try FLVAudioPeerTests.run("ffmpeg", ["-nostdin", "-i", path, "-af", "volumedetect", "-f", "null", "-"])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        let maxVolume = lines.first { $0.contains("max_volume:") }
            .flatMap { $0.split(separator: "max_volume:").last }
            .flatMap { Double($0.replacingOccurrences(of: "dB", with: "").trimmingCharacters(in: .whitespaces)) }
        #expect(maxVolume == -91.0)
        let samples = lines.first { $0.contains("n_samples:") }
            .flatMap { $0.split(separator: "n_samples:").last }
            .flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        #expect(samples == 102_400 * channelConfiguration)
    }
}
