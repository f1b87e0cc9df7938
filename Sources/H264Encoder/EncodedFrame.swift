public import H264

/// One encoded access unit, as VideoToolbox hands out a `CMSampleBuffer`: every NAL unit of the
/// picture in AVCC form (4-byte big-endian length before each), its timing, and the format it
/// belongs to.
public struct EncodedFrame: Sendable {
    /// The coding type of the picture, after x264's frame types.
    public enum FrameType: String, Hashable, Sendable {
        /// An IDR picture (clause 3.69): a random access point, decodable on its own.
        case idr
        /// An intra picture that is not IDR (later pictures may reference earlier ones).
        case i
        /// A predicted picture.
        case p
        /// A bi-predicted picture other pictures reference.
        case bReference
        /// A bi-predicted picture no other picture references (disposable).
        case b
    }

    /// The NAL units of the access unit, each preceded by its length as 4 bytes big-endian
    /// (`nalUnitLengthSize` 4). Parameter sets are not included: they are in ``formatDescription``.
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
    /// The parameter sets (SPS, PPS), `avcC` and length size of the stream this frame belongs to.
    public let formatDescription: FormatDescription
    /// The coded picture width in pixels (the format's display width).
    public let width: Int
    /// The coded picture height in pixels.
    public let height: Int

    /// Creates an encoded frame (sessions make these; tests and adaptors may too).
    public init(data: [UInt8], presentationTimeStamp: Duration, decodeTimeStamp: Duration, duration: Duration,
                frameType: FrameType, formatDescription: FormatDescription, width: Int, height: Int) {
        self.data = data
        self.presentationTimeStamp = presentationTimeStamp
        self.decodeTimeStamp = decodeTimeStamp
        self.duration = duration
        self.frameType = frameType
        self.formatDescription = formatDescription
        self.width = width
        self.height = height
    }

    /// True for an IDR picture: decoding may start here (VideoToolbox: no `NotSync` attachment).
    public var isKeyframe: Bool { frameType == .idr }

    /// The NAL units (without length prefixes), as slices of ``data``.
    ///
    /// - Throws: `H264Error.Code.lengthPastEnd` when a length runs past the end of data,
    ///   `H264Error.Code.truncated` when fewer than 4 bytes remain for a length (never for
    ///   frames a session made).
    public func nalUnits() throws(H264Error) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        let data = self.data
        let walk = data.withUnsafeBytes { buffer in
            Result { () throws(H264Error) in
                try AVCC.forEachNALUnit(in: buffer, lengthSize: 4, allowingEmptyNALUnits: true) { _, range in
                    units.append(data[range])
                }
            }
        }
        try walk.get()
        return units
    }
}
