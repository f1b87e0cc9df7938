import AudioCodecs
import MediaCore
import Testing

/// `AudioSpecificConfig` (ISO/IEC 14496-3 1.6.2.1) read element by element and written back.
struct AudioSpecificConfigTests {
    /// Configurations as FFmpeg's `aac` encoder writes them into `esds` and SDP `config=`
    /// (`ffmpeg -f lavfi -i sine -c:a aac -ar R -ac C -f mp4`), and an HE-AAC configuration with
    /// explicit SBR written by hand from 1.6.2.1 (`2B8A0800`: type 5, output at 44.1 kHz, an AAC
    /// LC core at 22.05 kHz, mono).
    @Test(arguments: [
        ([0x11, 0x90], 2, 48_000, 2, nil),
        ([0x12, 0x10], 2, 44_100, 2, nil),
        ([0x14, 0x08], 2, 16_000, 1, nil),
        ([0x15, 0x88], 2, 8_000, 1, nil),
        ([0x2B, 0x8A, 0x08, 0x00], 2, 22_050, 1, 44_100),
    ] as [([UInt8], Int, Int, Int, Int?)])
    func readsTheElements(bytes: [UInt8], objectType: Int, frequency: Int, channels: Int, extensionFrequency: Int?) throws {
        let config = try AudioSpecificConfig(bytes)
        #expect(config.audioObjectType == objectType)
        #expect(config.samplingFrequency == frequency)
        #expect(config.channelConfiguration == channels)
        #expect(config.extensionSamplingFrequency == extensionFrequency)
        #expect(config.samplesPerFrame == 1024)
        #expect(config.bytes == bytes)
    }

    @Test(arguments: [(48_000, 2, [UInt8]([0x11, 0x90])), (44_100, 2, [0x12, 0x10]), (8_000, 1, [0x15, 0x88]),
                      (11_000, 1, [0x17, 0x80, 0x15, 0x7C, 0x08])])
    func writesWhatItReads(frequency: Int, channels: Int, expected: [UInt8]) throws {
        let written = AudioSpecificConfig(samplingFrequency: frequency, channelConfiguration: channels)
        #expect(written.bytes == expected)
        let read = try AudioSpecificConfig(written.bytes)
        #expect(read.samplingFrequency == frequency && read.channelConfiguration == channels && read.audioObjectType == 2)
        #expect(read.formatDescription == AudioFormatDescription(codec: .aac, sampleRate: frequency, channelCount: channels,
                                                                 magicCookie: expected, samplesPerFrame: 1024))
    }

    @Test(arguments: [([UInt8](), MediaError.Code.truncated, "audioObjectType"), ([0x10], .truncated, "samplingFrequencyIndex"),
                      ([0x16, 0x88], .valueOutOfRange, "samplingFrequencyIndex"), ([0x43, 0x88], .unsupported, "audioObjectType")])
    func namesTheBadElement(bytes: [UInt8], code: MediaError.Code, field: String) {
        #expect { try AudioSpecificConfig(bytes) } throws: { error in
            (error as? MediaError)?.code == code && (error as? MediaError)?.field == field
        }
    }
}
