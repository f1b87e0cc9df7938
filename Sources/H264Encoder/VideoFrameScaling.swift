internal import CX264
public import H264

extension VideoFrame {
    /// This I420 frame scaled to `width` × `height` with libyuv's box filter, as a new tightly
    /// packed I420 frame (the source is only read). Used by `h264 transcode --size`.
    ///
    /// The corresponding libyuv call is `I420Scale` (filter `kFilterBox`).
    ///
    /// - Parameters:
    ///   - width: The new width: even, 2…16384.
    ///   - height: The new height: even, 2…16384.
    /// - Throws: `MediaError.Code.invalidFrame` for a frame that is not I420 (field
    ///   `pixelFormat`) or a size that is odd or out of range (field `size`).
    public func scaled(width: Int, height: Int) throws(MediaError) -> VideoFrame {
        guard pixelFormat == .i420 else {
            throw MediaError(.invalidFrame, field: "pixelFormat", "scaling takes I420 frames, not \(pixelFormat.rawValue)")
        }
        guard (2...16_384).contains(width), (2...16_384).contains(height), width % 2 == 0, height % 2 == 0 else {
            throw MediaError(.invalidFrame, field: "size", "\(width)×\(height): scaling needs even sizes in 2…16384")
        }
        let luma = width * height
        var output = [UInt8](repeating: 0, count: luma + 2 * (luma / 4))
        let status = output.withUnsafeMutableBufferPointer { destination in
            planes[0].storage.withUnsafeBufferPointer { y in
                planes[1].storage.withUnsafeBufferPointer { u in
                    planes[2].storage.withUnsafeBufferPointer { v in
                        cx264_i420_scale(y.baseAddress! + planes[0].offset, Int32(planes[0].bytesPerRow),
                                         u.baseAddress! + planes[1].offset, Int32(planes[1].bytesPerRow),
                                         v.baseAddress! + planes[2].offset, Int32(planes[2].bytesPerRow),
                                         Int32(self.width), Int32(self.height),
                                         destination.baseAddress!, destination.baseAddress! + luma,
                                         destination.baseAddress! + luma + luma / 4, Int32(width), Int32(height))
                    }
                }
            }
        }
        guard status == 0 else {
            throw MediaError(.invalidFrame, field: "size", "libyuv could not scale \(self.width)×\(self.height) to \(width)×\(height)")
        }
        return try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: output)
    }
}
