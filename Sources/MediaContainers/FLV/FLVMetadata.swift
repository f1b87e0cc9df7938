public import MediaCore
/// The `onMetaData` script data tag of a video-only FLV file (FLV specification annex E.4.4,
/// SCRIPTDATA in AMF0): what players show before reading any frame — the size, the frame rate
/// and the duration.
///
/// Written as the string `onMetaData` followed by an ECMA array of AMF0 numbers, as FFmpeg's
/// FLV muxer writes it.
public struct FLVMetadata: Hashable, Sendable {
    /// `duration`, in seconds: the end of the last picture's presentation.
    public var duration: Double?
    /// `width`, the display width in pixels.
    public var width: Int
    /// `height`, the display height in pixels.
    public var height: Int
    /// `framerate`, in frames per second.
    public var frameRate: Double?
    /// `videodatarate`, in kilobits per second.
    public var videoDataRate: Double?

    /// The codec, which `videocodecid` names.
    public var codec: VideoCodec

    /// `videocodecid` of H.264: 7, AVC.
    public static let videoCodecId = 7.0
    /// `videocodecid` of H.265: the FourCC `hvc1` as a number (0x68766331), as the Enhanced
    /// RTMP specification has it.
    public static let hevcVideoCodecId = Double(0x6876_6331)

    /// Creates metadata.
    public init(duration: Double? = nil, width: Int, height: Int, frameRate: Double? = nil, videoDataRate: Double? = nil,
                codec: VideoCodec = .h264) {
        self.codec = codec
        self.duration = duration
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.videoDataRate = videoDataRate
    }

    /// The script data tag's data: `02 000A "onMetaData"`, then an ECMA array (`08`, count)
    /// of named numbers (`00` + IEEE 754 double), ended by `00 00 09`.
    public func serialized() -> [UInt8] {
        var entries: [(String, Double)] = []
        if let duration { entries.append(("duration", duration)) }
        entries.append(("width", Double(width)))
        entries.append(("height", Double(height)))
        if let videoDataRate { entries.append(("videodatarate", videoDataRate)) }
        if let frameRate { entries.append(("framerate", frameRate)) }
        entries.append(("videocodecid", codec == .hevc ? Self.hevcVideoCodecId : Self.videoCodecId))
        return AMF0Value.serialized([.string("onMetaData"), .ecmaArray(entries.map { AMF0Property($0.0, .number($0.1)) })])
    }
}
