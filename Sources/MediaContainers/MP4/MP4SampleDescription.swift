public import MediaCore
import H264
import HEVC
import AudioCodecs

/// One `stsd` entry (ISO/IEC 14496-12 §8.5.2 `SampleEntry`) read to the format of the samples
/// that refer to it: `avc1`/`avc3` + `avcC` (ISO/IEC 14496-15 §5.4), `hvc1`/`hev1` + `hvcC`
/// (§8.4), `mp4a` + `esds` (ISO/IEC 14496-14 §5.6; in a `.mov` also inside `wave`), `Opus` +
/// `dOps` (Opus in ISOBMFF §4.3).
public struct MP4SampleDescription: Hashable, Sendable {
    /// The entry's type (its coding name, `avc1`, `mp4a` …).
    public var type: MP4BoxType
    /// The format; nil for a coding this reader does not read (the track's samples are then
    /// skipped, with a warning).
    public var format: MediaFormatDescription?
    /// `width` and `height` of a visual entry; nil for others.
    public var size: (width: Int, height: Int)? {
        get { width.map { ($0, height ?? 0) } }
        set { width = newValue?.width; height = newValue?.height }
    }
    private var width: Int?
    private var height: Int?

    /// An entry of its type and format.
    public init(type: MP4BoxType, format: MediaFormatDescription?) {
        self.type = type
        self.format = format
    }

    /// Reads a sample entry box.
    ///
    /// - Throws: `truncated` and `mp4BoxSizeInvalid` when the entry's fields or child boxes do
    ///   not hold; the errors of the configuration records (avcC, hvcC, AudioSpecificConfig);
    ///   `mp4MissingBox` when an `avc1` has no `avcC` (and so on).
    init(_ box: MP4Box) throws(MediaError) {
        self.init(type: box.type, format: nil)
        switch box.type {
        case "avc1", "avc3", "hvc1", "hev1":
            var cursor = box.cursor
            try cursor.skip(24, "\(box.type).reserved")
            width = try cursor.readUInt16("width")
            height = try cursor.readUInt16("height")
            let children = try box.children(skipping: 78)
            let isAVC = box.type == "avc1" || box.type == "avc3"
            let recordType: MP4BoxType = isAVC ? "avcC" : "hvcC"
            guard let record = children.first(where: { $0.type == recordType }) else {
                throw MediaError(.mp4MissingBox, field: recordType.description, byteOffset: box.header.offset,
                                 "sample entry '\(box.type)' without its '\(recordType)'")
            }
            do throws(MediaError) {
                if isAVC {
                    let parsed = try AVCDecoderConfigurationRecord(parsing: record.payload)
                    format = .video(.h264(FormatDescription(configurationRecord: parsed)))
                } else {
                    format = .video(.hevc(try HEVCDecoderConfigurationRecord(parsing: Array(record.payload))))
                }
            } catch {
                throw error.offset(by: record.header.payloadOffset)
            }
        case "mp4a":
            let (channels, rate, skip) = try Self.audioFields(box)
            let children = try box.children(skipping: skip)
            var esds = children.first { $0.type == "esds" }
            if esds == nil, let wave = children.first(where: { $0.type == "wave" }) { esds = try wave.child("esds") }
            guard let esds else {
                throw MediaError(.mp4MissingBox, field: "esds", byteOffset: box.header.offset, "sample entry 'mp4a' without its 'esds'")
            }
            let info = try Self.decoderSpecificInfo(esds)
            guard let info else {
                format = .audio(AudioFormatDescription(codec: .aac, sampleRate: rate, channelCount: channels))
                return
            }
            do throws(MediaError) {
                var description = try AudioSpecificConfig(Array(info.bytes)).formatDescription
                if description.channelCount == 0 { description.channelCount = channels }
                format = .audio(description)
            } catch {
                throw error.offset(by: info.offset)
            }
        case "Opus":
            let (_, _, skip) = try Self.audioFields(box)
            guard let dOps = try box.children(skipping: skip).first(where: { $0.type == "dOps" }) else {
                throw MediaError(.mp4MissingBox, field: "dOps", byteOffset: box.header.offset, "sample entry 'Opus' without its 'dOps'")
            }
            let head = try Self.opusHead(dOps)
            format = .audio(AudioFormatDescription(codec: .opus, sampleRate: 48_000, channelCount: Int(head[9]), magicCookie: head))
        default:
            break
        }
    }

    /// An AudioSampleEntry's `channelcount` and `samplerate` (16.16, integer part), and where its
    /// child boxes begin in the payload: 28 bytes, 44 after a QuickTime version 1 sound
    /// description, 64 after a version 2 (whose rate is a 64-bit float and count 32 bits).
    static func audioFields(_ box: MP4Box) throws(MediaError) -> (channels: Int, rate: Int, childrenOffset: Int) {
        var cursor = box.cursor
        try cursor.skip(8, "\(box.type).reserved")
        let version = try cursor.readUInt16("version")
        try cursor.skip(6, "reserved")
        var channels = try cursor.readUInt16("channelcount")
        try cursor.skip(6, "samplesize")
        var rate = Int(try cursor.readUInt32("samplerate") >> 16)
        switch version {
        case 1: return (channels, rate, 44)
        case 2:
            try cursor.skip(4, "sizeOfStructOnly")
            let bits = try cursor.readUInt64("audioSampleRate")
            let value = Double(bitPattern: bits)
            if value.isFinite && value > 0 && value < 1e7 { rate = Int(value) }
            channels = Int(try cursor.readUInt32("numAudioChannels"))
            return (channels, rate, 64)
        default: return (channels, rate, 28)
        }
    }

    /// The `DecoderSpecificInfo` (tag 5) inside `esds`'s `ES_Descriptor` (tag 3) →
    /// `DecoderConfigDescriptor` (tag 4) (ISO/IEC 14496-1 §7.2.6), with its file offset; nil when
    /// the descriptor has none.
    static func decoderSpecificInfo(_ esds: MP4Box) throws(MediaError) -> (bytes: ArraySlice<UInt8>, offset: Int)? {
        var cursor = esds.cursor
        _ = try cursor.readVersionAndFlags(esds.type)
        func descriptor(_ cursor: inout MP4ByteCursor) throws(MediaError) -> (tag: UInt8, body: MP4ByteCursor) {
            let tag = try cursor.readUInt8("tag")
            var size = 0
            for _ in 0..<4 {
                let byte = try cursor.readUInt8("sizeOfInstance")
                size = size << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            let at = cursor.fileOffset
            let body = try cursor.readBytes(Swift.min(size, cursor.remaining), "descriptor")
            return (tag, MP4ByteCursor(body, fileOffset: at))
        }
        var (tag, es) = try descriptor(&cursor)
        guard tag == 3 else {
            throw MediaError(.valueOutOfRange, field: "ES_DescrTag", byteOffset: esds.header.payloadOffset + 4, "tag \(tag), expected 3")
        }
        try es.skip(2, "ES_ID")
        let flags = try es.readUInt8("streamDependenceFlag")
        if flags & 0x80 != 0 { try es.skip(2, "dependsOn_ES_ID") }
        if flags & 0x40 != 0 { try es.skip(Int(try es.readUInt8("URLlength")), "URLstring") }
        if flags & 0x20 != 0 { try es.skip(2, "OCR_ES_Id") }
        while es.remaining > 0 {
            var (tag, body) = try descriptor(&es)
            guard tag == 4 else { continue }
            try body.skip(13, "DecoderConfigDescriptor")
            while body.remaining > 0 {
                let (inner, info) = try descriptor(&body)
                if inner == 5 { return (info.bytes, info.fileOffset) }
            }
            return nil
        }
        return nil
    }

    /// `dOps` (big-endian) rewritten as the `OpusHead` identification header (RFC 7845 §5.1,
    /// little-endian) that ``AudioFormatDescription/magicCookie`` holds for Opus.
    static func opusHead(_ dOps: MP4Box) throws(MediaError) -> [UInt8] {
        var cursor = dOps.cursor
        let version = try cursor.readUInt8("Version")
        guard version == 0 else {
            throw MediaError(.valueOutOfRange, field: "Version", byteOffset: dOps.header.payloadOffset, "dOps version \(version), expected 0")
        }
        let channels = try cursor.readUInt8("OutputChannelCount")
        let preSkip = try cursor.readUInt16("PreSkip")
        let rate = try cursor.readUInt32("InputSampleRate")
        let gain = try cursor.readUInt16("OutputGain")
        let family = try cursor.readUInt8("ChannelMappingFamily")
        var head = Array("OpusHead".utf8) + [1, channels]
        head += [UInt8(preSkip & 0xFF), UInt8(preSkip >> 8)]
        head += [UInt8(rate & 0xFF), UInt8(rate >> 8 & 0xFF), UInt8(rate >> 16 & 0xFF), UInt8(rate >> 24)]
        head += [UInt8(gain & 0xFF), UInt8(gain >> 8), family]
        if family != 0 {
            head += try cursor.readBytes(2 + Int(channels), "ChannelMappingTable")
        }
        return head
    }
}
