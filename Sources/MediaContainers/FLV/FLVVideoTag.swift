public import MediaCore
import H264
import HEVC
/// The data of an FLV video tag carrying H.264 or H.265 (`VIDEODATA`): a sequence header (the
/// avcC or the hvcC), coded frames (length-prefixed NAL units with a composition time) or an end
/// of sequence.
///
/// Two syntaxes carry the same packets:
/// - legacy FLV (annex E.4.3.1): `FrameType(4) | CodecID(4)` with CodecID 7 (AVC), then
///   `AVCPacketType` (0 sequence header, 1 NALU, 2 end of sequence) and `CompositionTime` (SI24);
/// - Enhanced RTMP v2: `IsExHeader(1) = 1 | FrameType(3) | VideoPacketType(4)`, the FourCC
///   (`avc1` H.264, `hvc1` H.265), then for `CodedFrames` (1) an SI24 composition time, for
///   `CodedFramesX` (3) none (it is 0), for `SequenceStart` (0) the configuration record and for
///   `SequenceEnd` (2) nothing.
///
/// Legacy FLV has no `CodecID` for H.265: its tags (``codec`` `VideoCodec.hevc`) are always
/// written in the enhanced syntax, whatever ``syntax`` says.
///
/// The same bytes are an RTMP video message's payload, so this type serves live RTMP as well as
/// FLV files (``FLVWriter``, ``FLVReader``).
public struct FLVVideoTag: Hashable, Sendable {
    /// `FrameType` (`VideoFrameType` in Enhanced RTMP).
    public enum FrameType: UInt8, Hashable, Sendable, CaseIterable {
        /// 1: a keyframe (an IDR picture, or a sequence header / end of sequence).
        case keyframe = 1
        /// 2: an inter frame.
        case interFrame = 2
        /// 3: a disposable inter frame (H.263 only).
        case disposableInterFrame = 3
        /// 4: a generated keyframe (server use only).
        case generatedKeyframe = 4
        /// 5: a video info / command frame (its data is not a video packet).
        case commandFrame = 5

        /// True for ``keyframe`` and ``generatedKeyframe``.
        public var isKeyframe: Bool { self == .keyframe || self == .generatedKeyframe }
    }

    /// Which of the two syntaxes the tag is written in.
    public enum Syntax: String, Hashable, Sendable, CaseIterable {
        /// Legacy FLV: CodecID 7 and `AVCPacketType`.
        case legacy
        /// Enhanced RTMP v2: the extended header with the FourCC `avc1`.
        case enhanced
    }

    /// What the tag carries.
    public enum Packet: Hashable, Sendable {
        /// `AVCPacketType` 0 / `SequenceStart`: the decoder configuration — the avcC of an H.264
        /// tag (`VideoFormatDescription.h264(_:)`), the hvcC of an `hvc1` tag
        /// (`VideoFormatDescription.hevc(_:)`), parsed whole.
        case sequenceHeader(VideoFormatDescription)
        /// `AVCPacketType` 1 / `CodedFrames` / `CodedFramesX`: one access unit's NAL units, each
        /// preceded by its length in the size the sequence header names, and the composition
        /// time offset PTS − DTS in milliseconds (−8,388,608…8,388,607; negative values are kept).
        case codedFrames(data: [UInt8], compositionTime: Int32)
        /// `AVCPacketType` 2 / `SequenceEnd`: the end of the sequence.
        case endOfSequence
    }

    /// `CodecID` 7: AVC.
    public static let avcCodecId: UInt8 = 7
    /// The Enhanced RTMP FourCC of H.264, `avc1`.
    public static let avcFourCC: [UInt8] = Array("avc1".utf8)
    /// The Enhanced RTMP FourCC of H.265, `hvc1`.
    public static let hevcFourCC: [UInt8] = Array("hvc1".utf8)
    /// The bytes of an hvcC before its arrays (ISO/IEC 14496-15 §8.3.3.1: up to `numOfArrays`).
    public static let hevcConfigurationFixedSize = 23
    /// The range of an SI24 composition time.
    public static let compositionTimeRange: ClosedRange<Int32> = -0x80_0000...0x7F_FFFF

    /// `FrameType`.
    public var frameType: FrameType
    /// What the tag carries.
    public var packet: Packet
    /// The syntax the tag is (to be) written in (H.265: always enhanced).
    public var syntax: Syntax
    /// The codec: H.264 (legacy `CodecID` 7 or `avc1`) or H.265 (`hvc1`).
    public var codec: VideoCodec

    /// Creates a tag; a ``Packet/sequenceHeader(_:)`` makes it a tag of its format's codec
    /// whatever `codec` says.
    public init(frameType: FrameType, packet: Packet, syntax: Syntax = .legacy, codec: VideoCodec = .h264) {
        self.frameType = frameType
        self.packet = packet
        self.syntax = syntax
        if case .sequenceHeader(let format) = packet { self.codec = format.codec } else { self.codec = codec }
    }

    /// The sequence header tag of `format`: the avcC (legacy or enhanced, as `syntax` says) or the
    /// hvcC (`hvc1`, always enhanced).
    public static func sequenceHeader(_ format: VideoFormatDescription, syntax: Syntax) -> FLVVideoTag {
        FLVVideoTag(frameType: .keyframe, packet: .sequenceHeader(format), syntax: format.codec == .hevc ? .enhanced : syntax)
    }

    /// The Enhanced RTMP FourCC of ``codec``.
    public var fourCC: [UInt8] { codec == .hevc ? Self.hevcFourCC : Self.avcFourCC }

    /// Parses a video tag's data (or an RTMP video message).
    ///
    /// Coded frames are kept as they are: their NAL unit lengths are split by the reader, which
    /// knows the length size from the sequence header.
    ///
    /// - Throws: `MediaError.Code.truncated` when the data ends inside its header (field named);
    ///   `MediaError.Code.unsupported` for another codec (`CodecID`, `VideoFourCc`), an Enhanced
    ///   RTMP packet type other than 0…3 (`VideoPacketType`: metadata, multitrack, ModEx …) or a
    ///   command frame (`FrameType` 5); `MediaError.Code.valueOutOfRange` for a `FrameType` of
    ///   0, 6 or 7 or an `AVCPacketType` above 2; the errors of
    ///   `AVCDecoderConfigurationRecord.init(parsing:)` for an H.264 sequence header, offset to
    ///   the tag data; for an H.265 one, `MediaError.Code.truncated` (field
    ///   `HEVCDecoderConfigurationRecord`) when it is shorter than its fixed part,
    ///   `MediaError.Code.invalidConfigurationRecord` for a `configurationVersion` other than 1
    ///   or a `lengthSizeMinusOne` of 2, and the errors of
    ///   `HEVCDecoderConfigurationRecord.init(parsing:)` (offset to the tag data) when its arrays
    ///   do not parse.
    public init(parsing data: some RandomAccessCollection<UInt8>) throws(MediaError) {
        // Offsets are counted from the start of the data; only the payload is copied.
        let count = data.count
        func byte(_ offset: Int) -> UInt8 { data[data.index(data.startIndex, offsetBy: offset)] }
        func payload(from offset: Int) -> [UInt8] { Array(data.dropFirst(offset)) }
        guard count > 0 else {
            throw MediaError(.truncated, field: "FrameType", byteOffset: 0, "empty video tag")
        }
        let first = byte(0)
        let enhanced = first & 0x80 != 0
        let frameValue = enhanced ? (first >> 4) & 0x07 : first >> 4
        guard let frameType = FrameType(rawValue: frameValue) else {
            throw MediaError(.valueOutOfRange, field: "FrameType", byteOffset: 0, "FrameType \(frameValue) is not 1…5")
        }
        guard frameType != .commandFrame else {
            throw MediaError(.unsupported, field: "FrameType", byteOffset: 0, "a video info / command frame carries no picture")
        }
        self.frameType = frameType
        if enhanced {
            syntax = .enhanced
            let packetType = first & 0x0F
            guard count >= 5 else {
                throw MediaError(.truncated, field: "VideoFourCc", byteOffset: 1, "the tag ends before its FourCC")
            }
            let fourCC = (1..<5).map(byte)
            switch fourCC {
            case Self.avcFourCC: codec = .h264
            case Self.hevcFourCC: codec = .hevc
            default:
                let name = String(decoding: fourCC.map { (0x20...0x7E).contains($0) ? $0 : 0x3F }, as: UTF8.self)
                throw MediaError(.unsupported, field: "VideoFourCc", byteOffset: 1, "FourCC '\(name)' is neither avc1 nor hvc1")
            }
            switch packetType {
            case 0 where codec == .hevc:
                packet = .sequenceHeader(try Self.hevcFormat(payload(from: 5), at: 5))
            case 0:
                packet = .sequenceHeader(try Self.format(data.dropFirst(5), at: 5))
            case 1:
                guard count >= 8 else {
                    throw MediaError(.truncated, field: "CompositionTime", byteOffset: 5, "the tag ends inside its composition time")
                }
                let time = Int(byte(5)) << 16 | Int(byte(6)) << 8 | Int(byte(7))
                packet = .codedFrames(data: payload(from: 8), compositionTime: BigEndian.signExtend24(time))
            case 2:
                packet = .endOfSequence
            case 3:
                packet = .codedFrames(data: payload(from: 5), compositionTime: 0)
            default:
                throw MediaError(.unsupported, field: "VideoPacketType", byteOffset: 0,
                                "Enhanced RTMP VideoPacketType \(packetType) (metadata, multitrack, ModEx …) is not read")
            }
        } else {
            syntax = .legacy
            codec = .h264
            let codecId = first & 0x0F
            guard codecId == Self.avcCodecId else {
                throw MediaError(.unsupported, field: "CodecID", byteOffset: 0, "CodecID \(codecId) is not 7 (AVC)")
            }
            guard count >= 5 else {
                throw MediaError(.truncated, field: count < 2 ? "AVCPacketType" : "CompositionTime",
                                byteOffset: Swift.min(count, 2), "the tag ends inside its AVC packet header")
            }
            let time = BigEndian.signExtend24(Int(byte(2)) << 16 | Int(byte(3)) << 8 | Int(byte(4)))
            switch byte(1) {
            case 0: packet = .sequenceHeader(try Self.format(data.dropFirst(5), at: 5))
            case 1: packet = .codedFrames(data: payload(from: 5), compositionTime: time)
            case 2: packet = .endOfSequence
            default:
                throw MediaError(.valueOutOfRange, field: "AVCPacketType", byteOffset: 1, "AVCPacketType \(byte(1)) is not 0, 1 or 2")
            }
        }
    }

    /// The format of an avcC (errors offset by `offset`).
    private static func format(_ bytes: some Collection<UInt8>, at offset: Int) throws(MediaError) -> VideoFormatDescription {
        do throws(MediaError) {
            return .h264(FormatDescription(configurationRecord: try AVCDecoderConfigurationRecord(parsing: bytes)))
        } catch {
            throw error.offset(by: offset)
        }
    }

    /// The format of an hvcC whose fixed part holds — at least 23 bytes, `configurationVersion`
    /// 1 and a NAL unit length of 1, 2 or 4 bytes — and whose arrays parse (errors offset by
    /// `offset`).
    private static func hevcFormat(_ bytes: [UInt8], at offset: Int) throws(MediaError) -> VideoFormatDescription {
        guard bytes.count >= hevcConfigurationFixedSize else {
            throw MediaError(.truncated, field: "HEVCDecoderConfigurationRecord", byteOffset: offset,
                            "an hvcC of \(bytes.count) bytes, its fixed part has \(hevcConfigurationFixedSize)")
        }
        guard bytes[0] == 1 else {
            throw MediaError(.invalidConfigurationRecord, field: "configurationVersion", byteOffset: offset,
                            "version \(bytes[0]), expected 1")
        }
        guard bytes[21] & 0x03 != 2 else {
            throw MediaError(.invalidConfigurationRecord, field: "lengthSizeMinusOne", byteOffset: offset + 21, "a 3-byte NAL unit length")
        }
        do throws(MediaError) {
            return .hevc(try HEVCDecoderConfigurationRecord(parsing: bytes))
        } catch {
            throw error.offset(by: offset)
        }
    }

    /// Appends the tag data.
    ///
    /// In the enhanced syntax, coded frames with a composition time of 0 are written as
    /// `CodedFramesX`. H.265 tags are written in the enhanced syntax.
    ///
    /// - Throws: `MediaError.Code.valueOutOfRange` for a composition time outside SI24 (field
    ///   `CompositionTime`); `MediaError.Code.invalidConfigurationRecord` for a sequence header
    ///   whose format is not of the tag's ``codec``.
    public func append(to output: inout [UInt8]) throws(MediaError) {
        let frame = frameType.rawValue
        switch codec == .hevc ? .enhanced : syntax {
        case .legacy:
            output.append(frame << 4 | Self.avcCodecId)
            switch packet {
            case .sequenceHeader(let format):
                guard format.codec == .h264 else {
                    throw MediaError(.invalidConfigurationRecord, field: "CodecID", "an hvcC in an H.264 tag")
                }
                output.append(contentsOf: [0, 0, 0, 0])
                output.append(contentsOf: format.configurationRecordBytes)
            case .codedFrames(let data, let compositionTime):
                try Self.checkCompositionTime(compositionTime)
                output.append(1)
                BigEndian.append(Int(compositionTime), count: 3, to: &output)
                output.append(contentsOf: data)
            case .endOfSequence:
                output.append(contentsOf: [2, 0, 0, 0])
            }
        case .enhanced:
            let header = 0x80 | frame << 4
            switch packet {
            case .sequenceHeader(let format):
                guard format.codec == codec else {
                    throw MediaError(.invalidConfigurationRecord, field: "VideoFourCc",
                                     codec == .hevc ? "an avcC in an hvc1 tag" : "an hvcC in an avc1 tag")
                }
                output.append(header | 0)
                output.append(contentsOf: fourCC)
                output.append(contentsOf: format.configurationRecordBytes)
            case .codedFrames(let data, let compositionTime):
                try Self.checkCompositionTime(compositionTime)
                output.append(header | (compositionTime == 0 ? 3 : 1))
                output.append(contentsOf: fourCC)
                if compositionTime != 0 { BigEndian.append(Int(compositionTime), count: 3, to: &output) }
                output.append(contentsOf: data)
            case .endOfSequence:
                output.append(header | 2)
                output.append(contentsOf: fourCC)
            }
        }
    }

    /// The tag data as bytes (see ``append(to:)``).
    public func serialized() throws(MediaError) -> [UInt8] {
        var output: [UInt8] = []
        if case .codedFrames(let data, _) = packet { output.reserveCapacity(data.count + 8) }
        try append(to: &output)
        return output
    }

    private static func checkCompositionTime(_ value: Int32) throws(MediaError) {
        guard compositionTimeRange.contains(value) else {
            throw MediaError(.valueOutOfRange, field: "CompositionTime", "composition time \(value) ms does not fit SI24")
        }
    }
}
