public import MediaCore
import AudioCodecs

/// The data of an FLV audio tag (`AUDIODATA`, FLV specification v10.1 annex E.4.2.1) carrying
/// AAC or G.711: `SoundFormat(4) | SoundRate(2) | SoundSize(1) | SoundType(1)`, then for AAC
/// (`SoundFormat` 10) an `AACAUDIODATA` — `AACPacketType` (0: the `AudioSpecificConfig`, 1: one
/// raw AAC frame) and its data —, for G.711 A-law (7) and µ-law (8) the samples themselves.
///
/// The same bytes are an RTMP audio message's payload (type 8), so this type serves live RTMP
/// as well as FLV files (``FLVWriter``, ``FLVReader``). Other sound formats (MP3, Nellymoser,
/// Speex, linear PCM, Enhanced RTMP's `ExAudioTagHeader`) are not read: their tags are
/// `unsupported`.
public struct FLVAudioTag: Hashable, Sendable {
    /// `SoundFormat`: the codec of the tag.
    public struct SoundFormat: RawRepresentable, Hashable, Sendable {
        /// The 4-bit `SoundFormat` value.
        public var rawValue: UInt8
        /// Creates a sound format from its value.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// 2: MP3 (not read by this library).
        public static let mp3 = SoundFormat(rawValue: 2)
        /// 7: G.711 A-law logarithmic PCM.
        public static let g711ALaw = SoundFormat(rawValue: 7)
        /// 8: G.711 µ-law logarithmic PCM.
        public static let g711MuLaw = SoundFormat(rawValue: 8)
        /// 9: reserved in v10.1; Enhanced RTMP's `ExAudioTagHeader` (not read by this library).
        public static let exHeader = SoundFormat(rawValue: 9)
        /// 10: AAC.
        public static let aac = SoundFormat(rawValue: 10)

        /// The codec of the format: AAC, G.711 A-law (`pcma`) or µ-law (`pcmu`); nil for the
        /// formats this library does not read.
        public var codec: AudioCodec? {
            switch self {
            case .aac: .aac
            case .g711ALaw: .pcma
            case .g711MuLaw: .pcmu
            default: nil
            }
        }

        /// The sound format of `codec`; nil for Opus (which legacy FLV has no value for).
        public init?(_ codec: AudioCodec) {
            switch codec {
            case .aac: self = .aac
            case .pcma: self = .g711ALaw
            case .pcmu: self = .g711MuLaw
            case .opus: return nil
            }
        }
    }

    /// `SoundRate`. For AAC always 3 (the `AudioSpecificConfig` gives the real rate); for G.711
    /// 0, which the specification reads as 8 kHz for these formats.
    public enum SoundRate: UInt8, Hashable, Sendable, CaseIterable {
        /// 0: 5.5 kHz (8 kHz for G.711).
        case rate5500 = 0
        /// 1: 11 kHz.
        case rate11025 = 1
        /// 2: 22 kHz.
        case rate22050 = 2
        /// 3: 44 kHz.
        case rate44100 = 3
    }

    /// `SoundSize`: the size of each uncompressed sample (always 16-bit for compressed formats).
    public enum SoundSize: UInt8, Hashable, Sendable, CaseIterable {
        /// 0: 8-bit samples.
        case bits8 = 0
        /// 1: 16-bit samples.
        case bits16 = 1
    }

    /// `SoundType`: mono or stereo (for AAC always 1; the `AudioSpecificConfig` gives the
    /// channels).
    public enum SoundType: UInt8, Hashable, Sendable, CaseIterable {
        /// 0: one channel.
        case mono = 0
        /// 1: two channels.
        case stereo = 1
    }

    /// What the tag carries.
    public enum Packet: Hashable, Sendable {
        /// `AACPacketType` 0: the AAC sequence header, its `AudioSpecificConfig` read into a
        /// format (the bytes are the format's `magicCookie`).
        case sequenceHeader(AudioFormatDescription)
        /// `AACPacketType` 1: one raw AAC frame (no ADTS header); or, for G.711, the samples.
        case frame([UInt8])
    }

    /// `SoundFormat`.
    public var soundFormat: SoundFormat
    /// `SoundRate`.
    public var soundRate: SoundRate
    /// `SoundSize`.
    public var soundSize: SoundSize
    /// `SoundType`.
    public var soundType: SoundType
    /// What the tag carries.
    public var packet: Packet

    /// Creates a tag from its fields.
    public init(soundFormat: SoundFormat, soundRate: SoundRate, soundSize: SoundSize, soundType: SoundType, packet: Packet) {
        self.soundFormat = soundFormat
        self.soundRate = soundRate
        self.soundSize = soundSize
        self.soundType = soundType
        self.packet = packet
    }

    /// The AAC sequence header tag of `format`, as FFmpeg writes it: `AF 00` (AAC, 44 kHz,
    /// 16-bit, stereo, as the specification fixes for AAC) and the `AudioSpecificConfig`.
    ///
    /// - Throws: `MediaError.Code.unsupported` (field `SoundFormat`) for a format that is not
    ///   AAC; `MediaError.Code.invalidConfigurationRecord` (field `AudioSpecificConfig`) when
    ///   its magic cookie is empty.
    public static func sequenceHeader(_ format: AudioFormatDescription) throws(MediaError) -> FLVAudioTag {
        guard format.codec == .aac else {
            throw MediaError(.unsupported, field: "SoundFormat", "an FLV sequence header is AAC only, not \(format.codec)")
        }
        guard !format.magicCookie.isEmpty else {
            throw MediaError(.invalidConfigurationRecord, field: "AudioSpecificConfig", "an AAC format without its AudioSpecificConfig")
        }
        return FLVAudioTag(soundFormat: .aac, soundRate: .rate44100, soundSize: .bits16, soundType: .stereo,
                           packet: .sequenceHeader(format))
    }

    /// The tag of one frame in `format`, as FFmpeg writes it: AAC `AF 01` and the raw frame;
    /// G.711 `72` (A-law) or `82` (µ-law) — rate 0, 16-bit, mono (`73`/`83` stereo) — and the
    /// samples.
    ///
    /// - Throws: `MediaError.Code.unsupported` for Opus (field `SoundFormat`) or G.711 at
    ///   another rate than 8 kHz (`SoundRate`) or with more than 2 channels (`SoundType`).
    public static func frame(_ data: [UInt8], format: AudioFormatDescription) throws(MediaError) -> FLVAudioTag {
        guard let soundFormat = SoundFormat(format.codec) else {
            throw MediaError(.unsupported, field: "SoundFormat", "legacy FLV has no SoundFormat for \(format.codec)")
        }
        if soundFormat == .aac {
            return FLVAudioTag(soundFormat: .aac, soundRate: .rate44100, soundSize: .bits16, soundType: .stereo, packet: .frame(data))
        }
        guard format.sampleRate == 8000 else {
            throw MediaError(.unsupported, field: "SoundRate", "G.711 in FLV is at 8 kHz, not \(format.sampleRate) Hz")
        }
        guard (1...2).contains(format.channelCount) else {
            throw MediaError(.unsupported, field: "SoundType", "\(format.channelCount) channels: FLV has mono or stereo")
        }
        return FLVAudioTag(soundFormat: soundFormat, soundRate: .rate5500, soundSize: .bits16,
                           soundType: format.channelCount == 2 ? .stereo : .mono, packet: .frame(data))
    }

    /// The format the tag gives by itself: the AAC sequence header's; for G.711 8 kHz with the
    /// channels of ``soundType``; nil for a raw AAC frame (the sequence header in force gives it).
    public var impliedFormat: AudioFormatDescription? {
        switch packet {
        case .sequenceHeader(let format): return format
        case .frame:
            guard let codec = soundFormat.codec, codec != .aac else { return nil }
            return AudioFormatDescription(codec: codec, sampleRate: 8000, channelCount: soundType == .stereo ? 2 : 1)
        }
    }

    /// Parses an audio tag's data (or an RTMP audio message).
    ///
    /// - Throws: `MediaError.Code.truncated` for no data (field `SoundFormat`), an AAC tag without
    ///   its `AACPacketType`, or a frame without bytes (`Data` for AAC, `SoundData` for G.711);
    ///   `MediaError.Code.unsupported` (field `SoundFormat`) for a format other than AAC and
    ///   G.711; `MediaError.Code.valueOutOfRange` for an `AACPacketType` above 1; the errors of
    ///   `AudioSpecificConfig.init(_:)` for a sequence header, offset to the tag data.
    public init(parsing data: some RandomAccessCollection<UInt8>) throws(MediaError) {
        guard let first = data.first else {
            throw MediaError(.truncated, field: "SoundFormat", byteOffset: 0, "empty audio tag")
        }
        soundFormat = SoundFormat(rawValue: first >> 4)
        soundRate = SoundRate(rawValue: (first >> 2) & 0x03) ?? .rate5500
        soundSize = first & 0x02 != 0 ? .bits16 : .bits8
        soundType = first & 0x01 != 0 ? .stereo : .mono
        switch soundFormat {
        case .aac:
            guard data.count >= 2 else {
                throw MediaError(.truncated, field: "AACPacketType", byteOffset: 1, "the tag ends before its AACPacketType")
            }
            let packetType = data[data.index(after: data.startIndex)]
            let body = Array(data.dropFirst(2))
            switch packetType {
            case 0:
                do throws(MediaError) {
                    packet = .sequenceHeader(try AudioSpecificConfig(body).formatDescription)
                } catch {
                    throw error.offset(by: 2)
                }
            case 1:
                guard !body.isEmpty else {
                    throw MediaError(.truncated, field: "Data", byteOffset: 2, "an AAC raw tag without a frame")
                }
                packet = .frame(body)
            default:
                throw MediaError(.valueOutOfRange, field: "AACPacketType", byteOffset: 1, "AACPacketType \(packetType) is not 0 or 1")
            }
        case .g711ALaw, .g711MuLaw:
            let body = Array(data.dropFirst(1))
            guard !body.isEmpty else {
                throw MediaError(.truncated, field: "SoundData", byteOffset: 1, "a G.711 tag without samples")
            }
            packet = .frame(body)
        default:
            throw MediaError(.unsupported, field: "SoundFormat", byteOffset: 0,
                             "SoundFormat \(soundFormat.rawValue) is not read (AAC 10, G.711 7 and 8 are)")
        }
    }

    /// Appends the tag data.
    ///
    /// - Throws: `MediaError.Code.unsupported` (field `SoundFormat`) for a sound format other
    ///   than AAC and G.711, or a sequence header in a G.711 tag or of another codec than AAC;
    ///   `MediaError.Code.invalidConfigurationRecord` (field `AudioSpecificConfig`) for a
    ///   sequence header without its configuration bytes.
    public func append(to output: inout [UInt8]) throws(MediaError) {
        guard soundFormat.codec != nil else {
            throw MediaError(.unsupported, field: "SoundFormat", "SoundFormat \(soundFormat.rawValue) is not written")
        }
        let first = soundFormat.rawValue << 4 | soundRate.rawValue << 2 | soundSize.rawValue << 1 | soundType.rawValue
        switch packet {
        case .sequenceHeader(let format):
            guard soundFormat == .aac, format.codec == .aac else {
                throw MediaError(.unsupported, field: "SoundFormat", "a sequence header is AAC only")
            }
            guard !format.magicCookie.isEmpty else {
                throw MediaError(.invalidConfigurationRecord, field: "AudioSpecificConfig", "an AAC format without its AudioSpecificConfig")
            }
            output.append(first)
            output.append(0)
            output.append(contentsOf: format.magicCookie)
        case .frame(let data):
            output.append(first)
            if soundFormat == .aac { output.append(1) }
            output.append(contentsOf: data)
        }
    }

    /// The tag data as bytes (see ``append(to:)``).
    public func serialized() throws(MediaError) -> [UInt8] {
        var output: [UInt8] = []
        if case .frame(let data) = packet { output.reserveCapacity(data.count + 2) }
        try append(to: &output)
        return output
    }
}
