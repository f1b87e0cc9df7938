public import MediaCore

/// An MPEG-4 audio `StreamMuxConfig` (ISO/IEC 14496-3 1.7.3.1, Table 1.42): the configuration of
/// a LATM multiplex — the `config` of an RTP `MP4A-LATM` track (RFC 6416 section 7.1, hex), or
/// sent in band at the head of an `AudioMuxElement` (`muxConfigPresent` 1, RFC 6416's `cpresent`).
///
/// Read in the clause's order, each element named. `audioMuxVersion` 0 and 1 are read
/// (`audioMuxVersionA` 1 is `unsupported`: its syntax is "to be defined"). Every program and
/// layer is read; the first stream's `AudioSpecificConfig` and `frameLengthType` are kept.
public struct StreamMuxConfig: Hashable, Sendable {
    /// `audioMuxVersion`: 0, or 1 (lengths in `LatmGetValue()` form).
    public var audioMuxVersion: Int
    /// `allStreamsSameTimeFraming`: every stream's payloads in each subframe.
    public var allStreamsSameTimeFraming: Bool
    /// `numSubFrames`: one less than the number of `PayloadMux()` per `AudioMuxElement`.
    public var numSubFrames: Int
    /// The number of streams (programs × layers); a depacketizer reads only single-stream
    /// multiplexes.
    public var streamCount: Int
    /// The first stream's `AudioSpecificConfig` (ISO/IEC 14496-3 1.6.2.1), its bits re-aligned to
    /// bytes (what an MP4 `esds` or an FLV sequence header holds).
    public var audioSpecificConfig: AudioSpecificConfig
    /// The first stream's `frameLengthType` (Table 1.43): 0 for a payload whose length is given
    /// by `PayloadLengthInfo()` in 0xFF runs (AAC), 1 for a fixed `frameLength`, 3–7 CELP/HVXC.
    public var frameLengthType: Int
    /// `latmBufferFullness` of the first stream (`frameLengthType` 0); 0xFF: variable rate.
    public var latmBufferFullness: Int
    /// `frameLength` of the first stream when `frameLengthType` is 1: the payload is
    /// `(frameLength + 20) × 8` bits.
    public var frameLength: Int?
    /// `otherDataLenBits` when `otherDataPresent`; 0 when it is not.
    public var otherDataLenBits: Int
    /// `crcCheckSum` when `crcCheckPresent`; nil when it is not.
    public var crcCheckSum: Int?

    /// Reads a `StreamMuxConfig` from bytes (the SDP `config=` parameter, decoded from hex).
    ///
    /// - Throws: `truncated` when the bytes end inside it; `unsupported` for
    ///   `audioMuxVersionA` 1 and a non-AAC object type; the `AudioSpecificConfig`'s errors.
    public init(_ bytes: [UInt8]) throws(MediaError) {
        var reader = BitReader(bytes)
        try self.init(reading: &reader)
    }

    /// Reads a `StreamMuxConfig` at `reader`'s position (in band, inside an `AudioMuxElement`).
    ///
    /// - Throws: as ``init(_:)``.
    public init(reading reader: inout BitReader) throws(MediaError) {
        audioMuxVersion = try reader.readBits(1, "audioMuxVersion")
        let versionA = audioMuxVersion == 1 ? try reader.readBits(1, "audioMuxVersionA") : 0
        guard versionA == 0 else {
            throw MediaError(.unsupported, field: "audioMuxVersionA", bitOffset: reader.bitOffset - 1,
                             "audioMuxVersionA 1 has no defined syntax")
        }
        if audioMuxVersion == 1 { _ = try Self.latmGetValue(&reader, "taraBufferFullness") }
        allStreamsSameTimeFraming = try reader.readFlag("allStreamsSameTimeFraming")
        numSubFrames = try reader.readBits(6, "numSubFrames")
        let numProgram = try reader.readBits(4, "numProgram")
        var streams = 0
        var first: (config: AudioSpecificConfig, type: Int, fullness: Int, length: Int?)?
        var previous: AudioSpecificConfig?
        for program in 0...numProgram {
            let numLayer = try reader.readBits(3, "numLayer")
            for layer in 0...numLayer {
                streams += 1
                let useSameConfig = program == 0 && layer == 0 ? false : try reader.readFlag("useSameConfig")
                var config = previous
                if !useSameConfig {
                    if audioMuxVersion == 0 {
                        config = try Self.readAudioSpecificConfig(&reader, bitLength: nil)
                    } else {
                        let length = try Self.latmGetValue(&reader, "ascLen")
                        config = try Self.readAudioSpecificConfig(&reader, bitLength: length)
                    }
                }
                guard let config else {
                    throw MediaError(.valueOutOfRange, field: "useSameConfig", bitOffset: reader.bitOffset, "no config to reuse")
                }
                previous = config
                let type = try reader.readBits(3, "frameLengthType")
                var fullness = 0, length: Int?
                switch type {
                case 0:
                    fullness = try reader.readBits(8, "latmBufferFullness")
                    if !allStreamsSameTimeFraming, [6, 20].contains(config.audioObjectType) {
                        _ = try reader.readBits(6, "coreFrameOffset")
                    }
                case 1: length = try reader.readBits(9, "frameLength")
                case 3, 4, 5: _ = try reader.readBits(6, "CELPframeLengthTableIndex")
                case 6, 7: _ = try reader.readBits(1, "HVXCframeLengthTableIndex")
                default: break
                }
                if first == nil { first = (config, type, fullness, length) }
            }
        }
        var otherBits = 0
        if try reader.readFlag("otherDataPresent") {
            if audioMuxVersion == 1 {
                otherBits = try Self.latmGetValue(&reader, "otherDataLenBits")
            } else {
                var escape = true
                while escape {
                    guard otherBits < 1 << 40 else {
                        throw MediaError(.valueOutOfRange, field: "otherDataLenBits", bitOffset: reader.bitOffset, "too large")
                    }
                    escape = try reader.readFlag("otherDataLenEsc")
                    otherBits = otherBits << 8 + (try reader.readBits(8, "otherDataLenTmp"))
                }
            }
        }
        otherDataLenBits = otherBits
        crcCheckSum = try reader.readFlag("crcCheckPresent") ? try reader.readBits(8, "crcCheckSum") : nil
        streamCount = streams
        // numProgram ≥ 0 and numLayer ≥ 0: the loops ran at least once.
        audioSpecificConfig = first!.config
        frameLengthType = first!.type
        latmBufferFullness = first!.fullness
        frameLength = first!.length
    }

    /// The `StreamMuxConfig` of a single AAC stream as RFC 6416 senders write it:
    /// `audioMuxVersion` 0, `allStreamsSameTimeFraming` 1, one subframe, one program and layer,
    /// `frameLengthType` 0 with `latmBufferFullness` 0xFF, no other data, no CRC.
    ///
    /// - Parameter audioSpecificConfig: the stream's configuration.
    public init(audioSpecificConfig: AudioSpecificConfig) {
        audioMuxVersion = 0
        allStreamsSameTimeFraming = true
        numSubFrames = 0
        streamCount = 1
        self.audioSpecificConfig = audioSpecificConfig
        frameLengthType = 0
        latmBufferFullness = 0xFF
        frameLength = nil
        otherDataLenBits = 0
        crcCheckSum = nil
    }

    /// The bytes of this configuration as ``init(audioSpecificConfig:)`` describes (the fields
    /// read from elsewhere beyond those are not written): what an SDP `config=` carries. The
    /// `AudioSpecificConfig` is written up to the end of its `GASpecificConfig`: what follows
    /// (an SBR sync extension, `ascLen` fill bits) is dropped, as FFmpeg's LATM muxer drops it.
    public var bytes: [UInt8] {
        var writer = BitSink()
        writer.write(0, 1)                  // audioMuxVersion
        writer.write(1, 1)                  // allStreamsSameTimeFraming
        writer.write(numSubFrames & 0x3F, 6)
        writer.write(0, 4)                  // numProgram
        writer.write(0, 3)                  // numLayer
        // Zero bits where the configuration lacks some of its GASpecificConfig (see bitLength(of:)).
        let ascBits = Self.bitLength(of: audioSpecificConfig)
        let source = audioSpecificConfig.bytes + [UInt8](repeating: 0, count: 8)
        for bit in 0..<ascBits {
            writer.write(Int(source[bit / 8] >> (7 - UInt8(bit % 8)) & 1), 1)
        }
        writer.write(0, 3)                  // frameLengthType
        writer.write(latmBufferFullness & 0xFF, 8)
        writer.write(0, 1)                  // otherDataPresent
        writer.write(0, 1)                  // crcCheckPresent
        return writer.bytes
    }

    /// `LatmGetValue()` (1.7.3.1): `bytesForValue` (2 bits), then that many bytes plus one.
    static func latmGetValue(_ reader: inout BitReader, _ name: String) throws(MediaError) -> Int {
        let count = try reader.readBits(2, "bytesForValue")
        var value = 0
        for _ in 0...count { value = value << 8 | (try reader.readBits(8, name)) }
        return value
    }

    /// The number of bits the `AudioSpecificConfig` in `config.bytes` occupies (its
    /// `GASpecificConfig` read to the end, zero bits taken for any it lacks — a configuration
    /// read whole by `ascLen` may stop early); its whole bytes when that cannot be told.
    static func bitLength(of config: AudioSpecificConfig) -> Int {
        var reader = BitReader(config.bytes + [UInt8](repeating: 0, count: 8))
        guard (try? readAudioSpecificConfig(&reader, bitLength: nil)) != nil else { return config.bytes.count * 8 }
        return reader.bitOffset
    }

    /// Reads an `AudioSpecificConfig` at any bit position: its elements up to the end of
    /// `GASpecificConfig` (`dependsOnCoreCoder`, `extensionFlag` …, `epConfig` of the error
    /// resilient types), or `bitLength` bits when the multiplex gives its length (`ascLen`). The
    /// bits are copied out, aligned, and read by ``AudioSpecificConfig/init(_:)``.
    static func readAudioSpecificConfig(_ reader: inout BitReader, bitLength: Int?) throws(MediaError) -> AudioSpecificConfig {
        let start = reader.bitOffset
        if let bitLength {
            guard bitLength <= reader.bitsRemaining else {
                throw MediaError(.truncated, field: "AudioSpecificConfig", bitOffset: start, "ascLen \(bitLength) runs past the end")
            }
            try reader.skipBits(bitLength, "AudioSpecificConfig")
        } else {
            var type = try AudioSpecificConfig.readAudioObjectType(&reader, "audioObjectType")
            _ = try AudioSpecificConfig.readSamplingFrequency(&reader, "samplingFrequencyIndex", "samplingFrequency")
            let channels = try reader.readBits(4, "channelConfiguration")
            if type == 5 || type == 29 {
                _ = try AudioSpecificConfig.readSamplingFrequency(&reader, "extensionSamplingFrequencyIndex", "extensionSamplingFrequency")
                type = try AudioSpecificConfig.readAudioObjectType(&reader, "audioObjectType")
                if type == 22 { _ = try reader.readBits(4, "extensionChannelConfiguration") }
            }
            guard [1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23].contains(type) else {
                throw MediaError(.unsupported, field: "audioObjectType", bitOffset: start, "audio object type \(type) is not AAC")
            }
            // GASpecificConfig (4.4.1).
            _ = try reader.readFlag("frameLengthFlag")
            if try reader.readFlag("dependsOnCoreCoder") { _ = try reader.readBits(14, "coreCoderDelay") }
            let extensionFlag = try reader.readFlag("extensionFlag")
            guard channels != 0 else {
                throw MediaError(.unsupported, field: "program_config_element", bitOffset: reader.bitOffset,
                                 "channelConfiguration 0 (a program_config_element) in a LATM configuration")
            }
            if type == 6 || type == 20 { _ = try reader.readBits(3, "layerNr") }
            if extensionFlag {
                if type == 22 {
                    _ = try reader.readBits(5, "numOfSubFrame")
                    _ = try reader.readBits(11, "layer_length")
                }
                if [17, 19, 20, 23].contains(type) { _ = try reader.readBits(3, "aacSectionDataResilienceFlags") }
                _ = try reader.readFlag("extensionFlag3")
            }
            if [17, 19, 20, 21, 22, 23].contains(type) { _ = try reader.readBits(2, "epConfig") }
        }
        let end = reader.bitOffset
        var sink = BitSink()
        var copier = BitReader(reader.bytes)
        try copier.skipBits(start)
        var remaining = end - start
        while remaining > 0 {
            let count = min(remaining, 24)
            sink.write(try copier.readBits(count, "AudioSpecificConfig"), count)
            remaining -= count
        }
        do throws(MediaError) {
            return try AudioSpecificConfig(sink.bytes)
        } catch {
            throw error.offset(by: start / 8)
        }
    }
}

/// Bits written most significant first, the last byte padded with zeros (the writers of the
/// audio configurations and RTP payload headers).
package struct BitSink {
    /// The bytes written so far.
    package private(set) var bytes: [UInt8] = []
    private var pending = 0

    /// An empty sink.
    package init() {}

    /// Writes the low `count` bits of `value`, the most significant first.
    package mutating func write(_ value: Int, _ count: Int) {
        for bit in stride(from: count - 1, through: 0, by: -1) {
            if pending == 0 { bytes.append(0) }
            bytes[bytes.count - 1] |= UInt8(value >> bit & 1) << (7 - UInt8(pending))
            pending = (pending + 1) & 7
        }
    }
}
