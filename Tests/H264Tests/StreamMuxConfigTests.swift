import AudioCodecs
import MediaCore
import Testing

/// `StreamMuxConfig` and `AudioMuxElement` (ISO/IEC 14496-3 1.7.3), from bytes FFmpeg wrote and
/// bytes built here from the syntax table.
@Suite struct StreamMuxConfigTests {
    /// FFmpeg 5.1.9's `config=400023203fc0` (Fixtures/audio/sine-48k-stereo.latm.sdp): version 0,
    /// one subframe, one stream, AAC-LC 48 kHz stereo, frameLengthType 0, fullness 0xFF; and
    /// ``StreamMuxConfig/bytes`` writes it back.
    @Test func readsAndWritesFFmpegsConfig() throws {
        let config = try StreamMuxConfig([0x40, 0x00, 0x23, 0x20, 0x3F, 0xC0])
        #expect(config.audioMuxVersion == 0 && config.allStreamsSameTimeFraming && config.numSubFrames == 0 && config.streamCount == 1)
        #expect(config.audioSpecificConfig.bytes == [0x11, 0x90] && config.audioSpecificConfig.samplingFrequency == 48_000)
        #expect(config.frameLengthType == 0 && config.latmBufferFullness == 0xFF && config.otherDataLenBits == 0 && config.crcCheckSum == nil)
        #expect(config.bytes == [0x40, 0x00, 0x23, 0x20, 0x3F, 0xC0])
        #expect(StreamMuxConfig(audioSpecificConfig: config.audioSpecificConfig) == config)
    }

    /// audioMuxVersion 1: `taraBufferFullness` and `ascLen` in `LatmGetValue()` form.
    @Test func readsAudioMuxVersion1() throws {
        var sink = BitSink()
        sink.write(1, 1); sink.write(0, 1)               // audioMuxVersion 1, audioMuxVersionA 0
        sink.write(0, 2); sink.write(0xFF, 8)            // taraBufferFullness: bytesForValue 0, 0xFF
        sink.write(1, 1); sink.write(0, 6); sink.write(0, 4); sink.write(0, 3)
        sink.write(0, 2); sink.write(16, 8)              // ascLen 16
        sink.write(0x1408, 16)                           // AAC-LC 16 kHz mono
        sink.write(0, 3); sink.write(0xFF, 8)            // frameLengthType 0, latmBufferFullness
        sink.write(0, 1); sink.write(1, 1); sink.write(0xAB, 8)  // no other data; crcCheckSum
        let config = try StreamMuxConfig(sink.bytes)
        #expect(config.audioMuxVersion == 1 && config.audioSpecificConfig.bytes == [0x14, 0x08] && config.crcCheckSum == 0xAB)
    }

    /// `cpresent=1`: the element's first bit 0 (`useSameStreamMux` 0), its own StreamMuxConfig,
    /// then the subframe, not byte-aligned; the next element reuses it (first bit 1).
    @Test func readsAnInBandConfigAndReusesIt() throws {
        var sink = BitSink()
        sink.write(0, 1)
        for byte in [0x40, 0x00, 0x23, 0x20, 0x3F] { sink.write(byte, 8) }
        sink.write(0b1100, 4)                            // the config's last 4 bits (0xC0's top four)
        sink.write(3, 8); sink.write(0xA1A2A3, 24)       // PayloadLengthInfo 3, the payload
        let first = try AudioMuxElement(sink.bytes, muxConfigPresent: true, streamMuxConfig: nil)
        #expect(first.carriedStreamMuxConfig && first.payloads == [[0xA1, 0xA2, 0xA3]])
        #expect(first.streamMuxConfig.audioSpecificConfig.bytes == [0x11, 0x90])
        var again = BitSink()
        again.write(1, 1); again.write(1, 8); again.write(0x55, 8)
        let second = try AudioMuxElement(again.bytes, muxConfigPresent: true, streamMuxConfig: first.streamMuxConfig)
        #expect(!second.carriedStreamMuxConfig && second.payloads == [[0x55]])
    }

    /// PayloadLengthInfo in 0xFF runs: 255 is `FF 00`, 600 is `FF FF 5A`.
    @Test func payloadLengthInfoIsARunOf0xFF() throws {
        #expect(AudioMuxElement.payloadLengthInfo(255) == [0xFF, 0x00])
        #expect(AudioMuxElement.payloadLengthInfo(600) == [0xFF, 0xFF, 0x5A])
        let config = try StreamMuxConfig([0x40, 0x00, 0x23, 0x20, 0x3F, 0xC0])
        let payload = [UInt8](repeating: 7, count: 600)
        let element = try AudioMuxElement(AudioMuxElement.payloadLengthInfo(600) + payload, muxConfigPresent: false, streamMuxConfig: config)
        #expect(element.payloads == [payload])
    }

    /// Regression (audio-config fuzz target): an `ascLen` (audioMuxVersion 1) that stops before
    /// the end of the GASpecificConfig; written as version 0, the missing bits are zeros and the
    /// bytes read back to the same bytes (the writer used to index past the configuration).
    @Test func aShortAscLenIsWrittenWithZeroBits() throws {
        var sink = BitSink()
        sink.write(1, 1); sink.write(0, 1); sink.write(0, 2); sink.write(0xFF, 8)
        sink.write(1, 1); sink.write(0, 6); sink.write(0, 4); sink.write(0, 3)
        sink.write(0, 2); sink.write(14, 8)              // ascLen 14: up to frameLengthFlag only
        sink.write(0x1408 >> 2, 14)
        sink.write(0, 3); sink.write(0xFF, 8); sink.write(0, 1); sink.write(0, 1)
        let config = try StreamMuxConfig(sink.bytes)
        #expect(config.audioSpecificConfig.samplingFrequency == 16_000 && config.audioSpecificConfig.channelConfiguration == 1)
        let written = StreamMuxConfig(audioSpecificConfig: config.audioSpecificConfig)
        let reread = try StreamMuxConfig(written.bytes)
        #expect(reread.bytes == written.bytes && reread.audioSpecificConfig.bytes == [0x14, 0x08])
    }
}
