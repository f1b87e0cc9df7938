public import MediaCore

extension HEVCAccessUnit {
    /// An H.265 frame read as an access unit: the same 4-byte-length bytes and each NAL unit's
    /// type from its two-byte header. The stream offset and size are 0 and the data's size: a
    /// frame keeps no place in a byte stream.
    ///
    /// - Parameter frame: a video frame (4-byte lengths).
    public init(_ frame: CompressedFrame) {
        let data = frame.data
        let units = (try? AVCC.nalUnits(in: data, lengthSize: 4, allowingEmptyNALUnits: true)) ?? []
        let types = units.filter { !$0.isEmpty }.map { range in
            HEVCNALUnitHeader(data[range.lowerBound], range.count > 1 ? data[range.lowerBound + 1] : 0).nalUnitType
        }
        self.init(data: data, nalUnitTypes: types, streamOffset: 0, byteCount: data.count)
    }
}
