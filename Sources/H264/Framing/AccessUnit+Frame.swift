public import MediaCore

extension AccessUnit {
    /// An H.264 frame read as an access unit: the same 4-byte-length bytes, each NAL unit's type
    /// from its header byte, and the frame's format (nil when the frame is not H.264). The
    /// stream offset and size are 0 and the data's size: a frame keeps no place in a byte stream.
    ///
    /// - Parameter frame: a video frame (4-byte lengths).
    public init(_ frame: CompressedFrame) {
        let data = frame.data
        let units = (try? AVCC.nalUnits(in: data, lengthSize: 4, allowingEmptyNALUnits: true)) ?? []
        self.init(data: data, nalUnitTypes: units.filter { !$0.isEmpty }.map { NALUnitHeader(byte: data[$0.lowerBound]).nalUnitType },
                  streamOffset: 0, byteCount: data.count, formatDescription: frame.videoFormat?.h264)
    }
}
