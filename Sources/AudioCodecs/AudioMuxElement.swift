public import MediaCore

/// An MPEG-4 audio `AudioMuxElement` (ISO/IEC 14496-3 1.7.3.1, Table 1.41): the payload of an
/// RTP `MP4A-LATM` packet, or of several packets that one element was fragmented over (RFC 6416
/// section 6). It holds `numSubFrames + 1` subframes, each a `PayloadLengthInfo()` (for
/// `frameLengthType` 0: the length in bytes as a run of 0xFF bytes and a last byte below 0xFF)
/// and a `PayloadMux()` (the AAC access unit).
///
/// Only single-stream multiplexes (one program, one layer) with `allStreamsSameTimeFraming` and
/// `frameLengthType` 0 or 1 are read — what every AAC sender writes; others are `unsupported`.
public struct AudioMuxElement: Hashable, Sendable {
    /// The configuration the element was read with: its own, when `useSameStreamMux` was 0.
    public var streamMuxConfig: StreamMuxConfig
    /// True when the element carried its own `StreamMuxConfig` (`useSameStreamMux` 0).
    public var carriedStreamMuxConfig: Bool
    /// The access units of its subframes, in order (`PayloadMux()`).
    public var payloads: [[UInt8]]

    /// The largest access unit read (bytes): a `PayloadLengthInfo()` saying more is an error,
    /// never an allocation.
    public static let maximumPayloadSize = 65_536

    /// Reads an `AudioMuxElement`.
    ///
    /// - Parameters:
    ///   - bytes: the element (one RTP payload, or the payloads of its fragments joined).
    ///   - muxConfigPresent: RFC 6416's `cpresent`: 1 when each element may carry a
    ///     `StreamMuxConfig` (`useSameStreamMux` is read first).
    ///   - streamMuxConfig: the configuration in force (from the SDP, or the last in-band one).
    /// - Throws: `invalidConfigurationRecord` (field `StreamMuxConfig`) when no configuration is
    ///   known for an element that carries none; `unsupported` for a multiplex of several streams
    ///   or `frameLengthType` other than 0 and 1; `lengthPastEnd` (field `PayloadLengthInfo`) when
    ///   a subframe's length runs past the bytes; `truncated` and the configuration's errors.
    public init(_ bytes: [UInt8], muxConfigPresent: Bool, streamMuxConfig: StreamMuxConfig?) throws(MediaError) {
        var reader = BitReader(bytes)
        var config = streamMuxConfig
        carriedStreamMuxConfig = false
        if muxConfigPresent, !(try reader.readFlag("useSameStreamMux")) {
            config = try StreamMuxConfig(reading: &reader)
            carriedStreamMuxConfig = true
        }
        guard let config else {
            throw MediaError(.invalidConfigurationRecord, field: "StreamMuxConfig", byteOffset: 0,
                             "no StreamMuxConfig: the SDP gives no config and the element carries none")
        }
        guard config.streamCount == 1, config.allStreamsSameTimeFraming, config.frameLengthType <= 1 else {
            throw MediaError(.unsupported, field: "StreamMuxConfig", byteOffset: 0,
                             "\(config.streamCount) streams, frameLengthType \(config.frameLengthType): only one AAC stream is read")
        }
        var payloads: [[UInt8]] = []
        for _ in 0...config.numSubFrames {
            let start = reader.bitOffset
            var length = 0
            if let frameLength = config.frameLength {
                length = frameLength + 20
            } else {
                var byte = 0xFF
                while byte == 0xFF {
                    byte = try reader.readBits(8, "tmp")
                    length += byte
                }
            }
            guard length <= reader.bitsRemaining / 8, length <= Self.maximumPayloadSize else {
                throw MediaError(.lengthPastEnd, field: "PayloadLengthInfo", byteOffset: start / 8, bitOffset: start,
                                 "a payload of \(length) bytes with \(reader.bitsRemaining / 8) left")
            }
            if reader.isByteAligned {
                let from = reader.bitOffset / 8
                payloads.append(Array(bytes[from..<(from + length)]))
                try reader.skipBits(length * 8, "PayloadMux")
            } else {
                var payload: [UInt8] = []
                payload.reserveCapacity(length)
                for _ in 0..<length { payload.append(UInt8(try reader.readBits(8, "PayloadMux"))) }
                payloads.append(payload)
            }
        }
        self.streamMuxConfig = config
        self.payloads = payloads
    }

    /// The `PayloadLengthInfo()` of a payload of `length` bytes (`frameLengthType` 0): ⌊length /
    /// 255⌋ bytes 0xFF, then the rest.
    public static func payloadLengthInfo(_ length: Int) -> [UInt8] {
        Array(repeating: 0xFF, count: length / 255) + [UInt8(length % 255)]
    }
}
