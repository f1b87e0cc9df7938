public import H264
public import HEVC

/// One encoded access unit, as VideoToolbox hands out a `CMSampleBuffer`: every NAL unit of the
/// picture in AVCC form (H.264) or HVCC form (H.265) — a 4-byte big-endian length before each —,
/// its timing, and the format it belongs to.
public struct EncodedFrame: Sendable {
    /// The coding type of the picture, after x264's and x265's frame types.
    public enum FrameType: String, Hashable, Sendable {
        /// An IDR picture (H.264 clause 3.69, H.265 `IDR_W_RADL` or `IDR_N_LP`): a random access
        /// point, decodable on its own.
        case idr
        /// An intra picture that is not IDR (later pictures may reference earlier ones). In
        /// H.265 a CRA picture (x265's open GOP) is one, and a random access point
        /// (``EncodedFrame/isKeyframe``).
        case i
        /// A predicted picture.
        case p
        /// A bi-predicted picture other pictures reference.
        case bReference
        /// A bi-predicted picture no other picture references (disposable).
        case b
    }

    /// The NAL units of the access unit, each preceded by its length as 4 bytes big-endian
    /// (`nalUnitLengthSize` 4). Parameter sets are not included: they are in ``format``.
    public let data: [UInt8]
    /// When the picture is shown.
    public let presentationTimeStamp: Duration
    /// When the picture is decoded; at most ``presentationTimeStamp``, increasing frame to frame.
    /// With B-frames the first decode time stamps lie before the first presentation time stamp.
    public let decodeTimeStamp: Duration
    /// How long the picture is shown, as given to `encode`.
    public let duration: Duration
    /// The picture's coding type.
    public let frameType: FrameType
    /// The format of the stream this frame belongs to, of either codec: H.264's SPS, PPS and
    /// `avcC`, or H.265's VPS, SPS, PPS and `hvcC` (VideoToolbox: the sample buffer's
    /// `CMVideoFormatDescription`).
    public let format: VideoFormatDescription
    /// The coded picture width in pixels (the format's display width).
    public let width: Int
    /// The coded picture height in pixels.
    public let height: Int
    /// True for a random access point — decoding may start here (VideoToolbox: no `NotSync`
    /// attachment): an H.264 IDR picture, or any H.265 IRAP picture (IDR, CRA, BLA).
    public let isKeyframe: Bool

    /// The H.264 format (SPS, PPS, `avcC`) of the stream this frame belongs to; `nil` for an
    /// H.265 frame (see ``format``).
    public var formatDescription: FormatDescription? { format.h264 }

    /// Creates an H.264 encoded frame (sessions make these; tests and adaptors may too); an IDR
    /// is a keyframe.
    public init(data: [UInt8], presentationTimeStamp: Duration, decodeTimeStamp: Duration, duration: Duration,
                frameType: FrameType, formatDescription: FormatDescription, width: Int, height: Int) {
        self.init(data: data, presentationTimeStamp: presentationTimeStamp, decodeTimeStamp: decodeTimeStamp,
                  duration: duration, frameType: frameType, format: .h264(formatDescription), width: width, height: height)
    }

    /// Creates an encoded frame of either codec.
    ///
    /// - Parameters:
    ///   - data: the NAL units, each after a 4-byte big-endian length.
    ///   - presentationTimeStamp: when the picture is shown.
    ///   - decodeTimeStamp: when it is decoded.
    ///   - duration: how long it is shown.
    ///   - frameType: the picture's coding type.
    ///   - isKeyframe: whether the frame is a random access point; `nil` (default) takes an IDR
    ///     as one. An H.265 CRA or BLA picture (``FrameType/i``) needs `true`.
    ///   - format: the stream's format (H.264 or H.265 parameter sets).
    ///   - width: the picture width in pixels.
    ///   - height: the picture height in pixels.
    public init(data: [UInt8], presentationTimeStamp: Duration, decodeTimeStamp: Duration, duration: Duration,
                frameType: FrameType, isKeyframe: Bool? = nil, format: VideoFormatDescription, width: Int, height: Int) {
        self.data = data
        self.presentationTimeStamp = presentationTimeStamp
        self.decodeTimeStamp = decodeTimeStamp
        self.duration = duration
        self.frameType = frameType
        self.isKeyframe = isKeyframe ?? (frameType == .idr)
        self.format = format
        self.width = width
        self.height = height
    }

    /// The frame as the one frame value every output takes (an RTSP or RTMP publisher, a
    /// decoder session, a container writer): the same bytes (no copy), format, times and
    /// keyframe flag.
    public var compressedFrame: CompressedFrame {
        CompressedFrame(data: data, format: format, presentationTime: presentationTimeStamp, decodeTime: decodeTimeStamp,
                        isKeyframe: isKeyframe)
    }

    /// The NAL units (without length prefixes), as slices of ``data``.
    ///
    /// - Throws: `MediaError.Code.lengthPastEnd` when a length runs past the end of data,
    ///   `MediaError.Code.truncated` when fewer than 4 bytes remain for a length (never for
    ///   frames a session made).
    public func nalUnits() throws(MediaError) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        let data = self.data
        let walk = data.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in
                try AVCC.forEachNALUnit(in: buffer, lengthSize: 4, allowingEmptyNALUnits: true) { _, range in
                    units.append(data[range])
                }
            }
        }
        try walk.get()
        return units
    }
}
