public import MediaCore
import AudioCodecs

/// The `m=audio` section of an SDP session description (RFC 8866) for a codec this package
/// reads: `mpeg4-generic` AAC (RFC 3640, mode `AAC-hbr` or `AAC-lbr`), `MP4A-LATM` (RFC 6416),
/// `PCMU` / `PCMA` (RFC 3551, static payload types 0 and 8 without an `rtpmap` too) and `opus`
/// (RFC 7587).
///
/// ``SessionDescription/audio`` holds the first such section of a parsed description;
/// ``init(format:payloadType:control:latm:)`` makes one to send, and ``sdpLines`` writes it.
public struct AudioMediaDescription: Hashable, Sendable {
    /// The RTP payload type (`m=audio` format and `a=rtpmap:`), 0…127.
    public var payloadType: UInt8
    /// The encoding name of `a=rtpmap`, as written (`mpeg4-generic`, `MPEG4-GENERIC`, `PCMU` …).
    public var encodingName: String
    /// The RTP clock rate of `a=rtpmap`: the unit of the packets' timestamps.
    public var clockRate: Int
    /// The channel count of `a=rtpmap` (its third field; 1 when absent).
    public var channelCount: Int
    /// The `a=fmtp` parameters, names lowercased, values as written (spaces around trimmed).
    public var formatParameters: [String: String]
    /// `a=control:` of the audio media: the URL an RTSP client names in its SETUP; nil when absent.
    public var control: String?
    /// The track's format, derived from the `rtpmap` and `fmtp` (AAC: the `config`'s
    /// `AudioSpecificConfig`; without a readable one, the `rtpmap`'s rate and channels and no
    /// magic cookie, with a warning).
    public var format: AudioFormatDescription
    /// How the frames are carried, derived from the encoding name and `fmtp`.
    public var payloadFormat: AudioRTPPayloadFormat
    /// What parsing tolerated (code `invalidSessionDescription`, the field, the byte offset of
    /// its line): a missing `indexlength` or `sizelength`, an unreadable `config`, an `fmtp` of
    /// another payload type. Empty for a description made here.
    public var warnings: [MediaError] = []

    /// A description to send a track of `format`: `mpeg4-generic` in mode `AAC-hbr` (13-bit
    /// sizes, 3-bit indexes, the `AudioSpecificConfig` as `config`) or `MP4A-LATM` (`cpresent=0`,
    /// the `StreamMuxConfig` as `config`) for AAC, `PCMU` / `PCMA` at the format's rate, and
    /// `opus/48000/2`.
    ///
    /// - Parameters:
    ///   - format: the track's format (AAC: its magic cookie is the `AudioSpecificConfig`).
    ///   - payloadType: the RTP payload type (0 for PCMU and 8 for PCMA are static; AAC and Opus
    ///     take a dynamic one, 96…127).
    ///   - control: `a=control:`, if any.
    ///   - latm: AAC as `MP4A-LATM` rather than `mpeg4-generic`.
    public init(format: AudioFormatDescription, payloadType: UInt8, control: String? = nil, latm: Bool = false) {
        self.payloadType = payloadType & 0x7F
        self.control = control
        self.format = format
        clockRate = format.sampleRate
        channelCount = format.channelCount
        switch format.codec {
        case .aac where latm:
            encodingName = "MP4A-LATM"
            let config = (try? AudioSpecificConfig(format.magicCookie))
                ?? AudioSpecificConfig(samplingFrequency: format.sampleRate, channelConfiguration: format.channelCount)
            let mux = StreamMuxConfig(audioSpecificConfig: config)
            formatParameters = ["profile-level-id": "30", "cpresent": "0", "object": "\(config.audioObjectType)",
                                "config": Self.hex(mux.bytes)]
            payloadFormat = .latm(muxConfigPresent: false, streamMuxConfig: mux)
        case .aac:
            encodingName = "mpeg4-generic"
            formatParameters = ["streamtype": "5", "profile-level-id": "1", "mode": "AAC-hbr", "sizelength": "13",
                                "indexlength": "3", "indexdeltalength": "3", "config": Self.hex(format.magicCookie)]
            payloadFormat = .mpeg4Generic(sizeLength: 13, indexLength: 3, indexDeltaLength: 3)
        case .pcmu, .pcma:
            encodingName = format.codec.rtpEncodingName
            formatParameters = [:]
            payloadFormat = .g711
        case .opus:
            encodingName = "opus"
            clockRate = 48_000
            channelCount = 2
            formatParameters = format.channelCount == 1 ? ["sprop-stereo": "0"] : [:]
            payloadFormat = .opus
        }
    }

    /// The section's SDP lines, without line ends: `m=audio 0 RTP/AVP PT`, `a=rtpmap`, `a=fmtp`
    /// (when there are parameters) and `a=control` (when set).
    public var sdpLines: [String] {
        let channels = channelCount != 1 || encodingName.lowercased() == "opus" ? "/\(channelCount)" : ""
        var lines = ["m=audio 0 RTP/AVP \(payloadType)", "a=rtpmap:\(payloadType) \(encodingName)/\(clockRate)\(channels)"]
        if !formatParameters.isEmpty {
            let order = ["streamtype", "profile-level-id", "mode", "sizelength", "indexlength", "indexdeltalength",
                         "object", "cpresent"]
            let keys = formatParameters.keys.sorted { a, b in
                let (i, j) = (order.firstIndex(of: a) ?? order.count, order.firstIndex(of: b) ?? order.count)
                return i != j ? i < j : a < b
            }
            lines.append("a=fmtp:\(payloadType) " + keys.map { "\($0)=\(formatParameters[$0]!)" }.joined(separator: ";"))
        }
        if let control { lines.append("a=control:\(control)") }
        return lines
    }

    /// A description read from an SDP's `rtpmap` and `fmtp`; nil when the codec is not one this
    /// package reads (the section is skipped). Tolerated problems become ``warnings`` at
    /// `offset` (the `fmtp` line's).
    init?(payloadType: UInt8, encodingName: String, clockRate: Int, channelCount: Int,
          formatParameters: [String: String], control: String?, offset: Int?, warnings: [MediaError]) {
        var found = warnings
        guard let (format, payloadFormat) = Self.derive(encodingName: encodingName, clockRate: clockRate, channelCount: channelCount,
                                                        formatParameters: formatParameters, offset: offset, warnings: &found)
        else { return nil }
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channelCount = channelCount
        self.formatParameters = formatParameters
        self.control = control
        self.format = format
        self.payloadFormat = payloadFormat
        self.warnings = found
    }

    /// The format and payload format an `rtpmap` and `fmtp` say; nil for a codec not read here.
    private static func derive(encodingName: String, clockRate: Int, channelCount: Int, formatParameters: [String: String],
                               offset: Int?, warnings: inout [MediaError]) -> (AudioFormatDescription, AudioRTPPayloadFormat)? {
        func warn(_ field: String, _ message: String) {
            warnings.append(MediaError(.invalidSessionDescription, field: field, byteOffset: offset, message))
        }
        let unconfigured = AudioFormatDescription(codec: .aac, sampleRate: clockRate, channelCount: channelCount)
        let format: AudioFormatDescription, payloadFormat: AudioRTPPayloadFormat
        switch encodingName.lowercased() {
        case "mpeg4-generic":
            let mode = formatParameters["mode"]?.lowercased()
            guard mode == "aac-hbr" || mode == "aac-lbr" || mode == nil else { return nil }
            if mode == nil { warn("mode", "no mode: read as AAC-hbr") }
            let defaults = mode == "aac-lbr" ? (6, 2, 2) : (13, 3, 3)
            func length(_ name: String) -> Int? {
                guard let text = formatParameters[name] else { return nil }
                guard let value = Int(text), (0...32).contains(value) else {
                    warn(name, "\"\(text)\" is not a number of bits from 0 to 32: ignored")
                    return nil
                }
                return value
            }
            var sizeLength = length("sizelength"), indexLength = length("indexlength")
            if sizeLength == nil || sizeLength == 0 {
                warn("sizelength", "no sizelength: \(defaults.0), \(defaults.1) and \(defaults.2) bits used")
                sizeLength = defaults.0
                indexLength = indexLength ?? defaults.1
            } else if indexLength == nil {
                // bluenviron/gortsplib#114: a camera sending sizelength without indexlength.
                warn("indexlength", "sizelength without indexlength: 0 bits used")
                indexLength = 0
            }
            payloadFormat = .mpeg4Generic(sizeLength: sizeLength!, indexLength: indexLength!,
                                          indexDeltaLength: length("indexdeltalength") ?? (indexLength == 0 ? 0 : defaults.2))
            if let text = formatParameters["config"], let bytes = Self.hexBytes(text),
               let config = try? AudioSpecificConfig(bytes) {
                var configured = config.formatDescription
                if config.channelCount == nil { configured.channelCount = channelCount }
                format = configured
            } else {
                warn("config", "no readable AudioSpecificConfig in config: the rtpmap's rate and channels used")
                format = unconfigured
            }
        case "mp4a-latm":
            var present = true
            if let text = formatParameters["cpresent"] {
                if text == "0" || text == "1" { present = text == "1" } else { warn("cpresent", "\"\(text)\" is not 0 or 1: 1 used") }
            }
            var mux: StreamMuxConfig?
            if let text = formatParameters["config"], !text.isEmpty {
                if let bytes = Self.hexBytes(text) { mux = try? StreamMuxConfig(bytes) }
                if mux == nil { warn("config", "\"\(text)\" is not a readable StreamMuxConfig") }
            } else if !present {
                // bluenviron/mediamtx#3590: cpresent=0 and no config — nothing says the format.
                warn("config", "cpresent=0 without a config: the stream's format is unknown")
            }
            payloadFormat = .latm(muxConfigPresent: present, streamMuxConfig: mux)
            if let config = mux?.audioSpecificConfig {
                var configured = config.formatDescription
                if config.channelCount == nil { configured.channelCount = channelCount }
                format = configured
            } else {
                format = unconfigured
            }
        case "pcmu", "pcma":
            payloadFormat = .g711
            format = .g711(encodingName.lowercased() == "pcmu" ? .pcmu : .pcma, sampleRate: clockRate, channelCount: channelCount)
        case "opus":
            payloadFormat = .opus
            format = .opus(channelCount: channelCount)
        default:
            return nil
        }
        return (format, payloadFormat)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index + 1 < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
