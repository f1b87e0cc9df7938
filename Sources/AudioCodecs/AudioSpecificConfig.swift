public import MediaCore

/// An MPEG-4 audio `AudioSpecificConfig` (ISO/IEC 14496-3 1.6.2.1): what an AAC decoder needs
/// before its first frame — the object type, the sampling frequency and the channel
/// configuration. It is the `config` of an RTP `mpeg4-generic` track (RFC 3640), the payload
/// of an FLV AAC sequence header and the `DecoderSpecificInfo` of an MP4 `esds`.
///
/// Read in the clause's order, each element named: an error says which element, at which bit.
/// Only the elements up to `GASpecificConfig` are read; the bytes are kept whole in ``bytes``
/// (what outputs send on) so nothing after them is lost.
public struct AudioSpecificConfig: Hashable, Sendable {
    /// `audioObjectType` (Table 1.17): 2 AAC LC, 5 SBR (HE-AAC), 29 PS (HE-AAC v2), … After an
    /// explicit SBR/PS signal (5 or 29 first), the underlying core's type.
    public var audioObjectType: Int
    /// `samplingFrequencyIndex` (Table 1.18); 15 when the frequency is given explicitly.
    public var samplingFrequencyIndex: Int
    /// The core's sampling frequency in Hz: from the index's table, or `samplingFrequency`.
    public var samplingFrequency: Int
    /// `channelConfiguration` (Table 1.19): 1 mono, 2 stereo, … 7 (7.1); 0 when a
    /// `program_config_element` says.
    public var channelConfiguration: Int
    /// Explicit SBR (HE-AAC): `extensionSamplingFrequency` in Hz, the rate output is played at;
    /// nil without explicit SBR.
    public var extensionSamplingFrequency: Int?
    /// `frameLengthFlag` of `GASpecificConfig`: false for 1024 samples per frame, true for 960.
    public var frameLengthFlag: Bool
    /// The configuration's bytes as they came (or as ``init(audioObjectType:samplingFrequency:channelConfiguration:)``
    /// wrote them).
    public var bytes: [UInt8]

    /// The sampling frequencies of `samplingFrequencyIndex` 0…12 (Table 1.18).
    public static let samplingFrequencies = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000,
                                             12_000, 11_025, 8_000, 7_350]

    /// Samples per channel in one frame of the core: 960 or 1024 (`frameLengthFlag`).
    public var samplesPerFrame: Int { frameLengthFlag ? 960 : 1024 }

    /// The channel count of ``channelConfiguration`` (Table 1.19: 7 is 8 channels); nil for 0
    /// (a `program_config_element` gives it) and the reserved values.
    public var channelCount: Int? {
        switch channelConfiguration {
        case 1...6: channelConfiguration
        case 7: 8
        default: nil
        }
    }

    /// Reads an `AudioSpecificConfig`.
    ///
    /// - Throws: `truncated` when the bytes end inside it; `valueOutOfRange` for a reserved
    ///   `samplingFrequencyIndex` (13, 14) or a sampling frequency of 0; `unsupported` for an
    ///   object type whose configuration is not `GASpecificConfig` (not AAC).
    public init(_ bytes: [UInt8]) throws(MediaError) {
        var reader = BitReader(bytes)
        var objectType = try Self.readAudioObjectType(&reader, "audioObjectType")
        let (index, frequency) = try Self.readSamplingFrequency(&reader, "samplingFrequencyIndex", "samplingFrequency")
        let channels = try reader.readBits(4, "channelConfiguration")
        var extensionFrequency: Int?
        if objectType == 5 || objectType == 29 {
            extensionFrequency = try Self.readSamplingFrequency(&reader, "extensionSamplingFrequencyIndex",
                                                                "extensionSamplingFrequency").frequency
            objectType = try Self.readAudioObjectType(&reader, "audioObjectType")
            if objectType == 22 { _ = try reader.readBits(4, "extensionChannelConfiguration") }
        }
        // Object types whose specific configuration is GASpecificConfig (1.6.2.1).
        guard [1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23].contains(objectType) else {
            throw MediaError(.unsupported, field: "audioObjectType", byteOffset: 0, "audio object type \(objectType) is not AAC")
        }
        let frameLength = try reader.readFlag("frameLengthFlag")
        if frequency == 0 { throw MediaError(.valueOutOfRange, field: "samplingFrequency", byteOffset: 0, "0 Hz") }
        audioObjectType = objectType
        samplingFrequencyIndex = index
        samplingFrequency = frequency
        channelConfiguration = channels
        extensionSamplingFrequency = extensionFrequency
        frameLengthFlag = frameLength
        self.bytes = bytes
    }

    /// Writes the two-byte configuration of a plain AAC stream (no SBR, 1024 samples per frame):
    /// `audioObjectType` (< 31), the index of `samplingFrequency` (or index 15 and the frequency
    /// when it is not in Table 1.18), `channelConfiguration`, then a `GASpecificConfig` of zeros.
    ///
    /// - Parameters:
    ///   - audioObjectType: 2 for AAC LC.
    ///   - samplingFrequency: the sampling frequency in Hz.
    ///   - channelConfiguration: 1 mono, 2 stereo, ….
    public init(audioObjectType: Int = 2, samplingFrequency: Int, channelConfiguration: Int) {
        self.audioObjectType = audioObjectType & 0x1F
        self.samplingFrequency = samplingFrequency
        self.channelConfiguration = channelConfiguration & 0x0F
        extensionSamplingFrequency = nil
        frameLengthFlag = false
        let index = Self.samplingFrequencies.firstIndex(of: samplingFrequency) ?? 15
        samplingFrequencyIndex = index
        var bits: [(value: Int, count: Int)] = [(self.audioObjectType, 5), (index, 4)]
        if index == 15 { bits.append((samplingFrequency & 0xFF_FFFF, 24)) }
        bits += [(self.channelConfiguration, 4), (0, 3)]
        var output: [UInt8] = [], accumulator = 0, pending = 0
        for (value, count) in bits {
            for bit in stride(from: count - 1, through: 0, by: -1) {
                accumulator = accumulator << 1 | (value >> bit & 1)
                pending += 1
                if pending == 8 { output.append(UInt8(accumulator)); accumulator = 0; pending = 0 }
            }
        }
        if pending > 0 { output.append(UInt8(accumulator << (8 - pending))) }
        bytes = output
    }

    /// The track format this configuration describes: AAC at the core's frequency (the rate of
    /// its frames' timestamps) with its channel count (2 when a `program_config_element` gives
    /// it), the bytes as its magic cookie.
    public var formatDescription: AudioFormatDescription {
        AudioFormatDescription(codec: .aac, sampleRate: samplingFrequency, channelCount: channelCount ?? 2,
                               magicCookie: bytes, samplesPerFrame: samplesPerFrame)
    }

    static func readAudioObjectType(_ reader: inout BitReader, _ name: String) throws(MediaError) -> Int {
        let type = try reader.readBits(5, name)
        return type == 31 ? 32 + (try reader.readBits(6, "audioObjectTypeExt")) : type
    }

    static func readSamplingFrequency(_ reader: inout BitReader, _ indexName: String, _ frequencyName: String)
        throws(MediaError) -> (index: Int, frequency: Int) {
        let bit = reader.bitOffset
        let index = try reader.readBits(4, indexName)
        switch index {
        case 0...12: return (index, samplingFrequencies[index])
        case 15: return (index, try reader.readBits(24, frequencyName))
        default: throw MediaError(.valueOutOfRange, field: indexName, byteOffset: bit / 8, bitOffset: bit, "reserved index \(index)")
        }
    }
}

extension AudioSpecificConfig {
    /// The 7-byte ADTS header (ISO/IEC 14496-3 1.A.2.2, no CRC) that goes before one raw AAC
    /// frame of `frameLength` bytes in an `.aac` file: MPEG-4, this configuration's profile
    /// (`audioObjectType` − 1), `sampling_frequency_index` and `channel_configuration`.
    ///
    /// - Parameter frameLength: the raw frame's size in bytes.
    /// - Returns: the header; nil when the frame or the configuration cannot be said in ADTS (a
    ///   frame over 8184 bytes, an object type over 4, an explicit frequency, 8 channels or more).
    public func adtsHeader(frameLength: Int) -> [UInt8]? {
        let total = frameLength + 7
        guard total < 1 << 13, (1...4).contains(audioObjectType), samplingFrequencyIndex < 13, channelConfiguration < 8 else { return nil }
        let profile = audioObjectType - 1
        return [
            0xFF, 0xF1,
            UInt8(profile << 6 | samplingFrequencyIndex << 2 | channelConfiguration >> 2),
            UInt8((channelConfiguration & 3) << 6 | total >> 11),
            UInt8(total >> 3 & 0xFF),
            UInt8((total & 7) << 5 | 0x1F),
            0xFC,
        ]
    }
}
