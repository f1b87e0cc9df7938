public import H264

extension VideoFrame {
    /// A frame of a decoded picture — `H264Decoder`'s `DecodedFrame` — for an encoder session,
    /// without the caller copying planes: a transcoder writes
    /// `try encoder.encode(VideoFrame(decoded), presentationTimeStamp: decoded.presentationTimeStamp)`.
    ///
    /// The picture's samples are copied once, by libavutil, from the decoder's picture buffer
    /// into one contiguous buffer that the frame owns (``init(pixelFormat:width:height:contiguous:)``);
    /// the encoder reads that buffer in place. The decoder's buffer goes back to its pool as
    /// soon as the decoded frame is released, so a decoder never waits for the encoder.
    ///
    /// - Throws: `MediaError.Code.invalidFrame` (field `pixelFormat`) for a picture in a layout
    ///   the encoder does not take (4:2:2, 4:4:4, grey), and as
    ///   ``init(pixelFormat:width:height:planes:)`` for a size it does not take (odd sizes).
    public init(_ picture: some EncodablePicture) throws(MediaError) {
        guard let layout = picture.packedLayout, let format = PixelFormat(rawValue: layout.rawValue) else {
            throw MediaError(.invalidFrame, field: "pixelFormat", "a picture in a layout the encoder does not take (4:2:0, NV12, BGRA or 10-bit 4:2:0)")
        }
        try self.init(pixelFormat: format, width: picture.width, height: picture.height, contiguous: picture.packedBytes())
    }
}
