internal import CX264
import H264

/// The three planes of a planar 4:2:0 picture as an encoder library reads them, valid only
/// inside the closure that receives them.
struct PlanarPlanes {
    /// Y, Cb, Cr base addresses.
    var y, u, v: UnsafePointer<UInt8>
    /// Y, Cb, Cr strides in bytes.
    var yStride, uStride, vStride: Int
    /// Bits per sample: 8, or 10 in 16-bit little-endian samples.
    var bitDepth: Int
}

extension VideoFrame {
    /// Hands `body` the frame as planar 4:2:0: the frame's own planes for I420 and 10-bit 4:2:0
    /// (read in place, no copy), or NV12 and BGRA converted to I420 into `scratch` by libyuv
    /// (reused frame to frame: no allocation once it has the size). Both encoders call it, x264
    /// for BGRA (it takes NV12 itself), x265 for everything but planar input.
    ///
    /// The corresponding libyuv calls are `NV12ToI420` and `ARGBToI420`.
    ///
    /// - Throws: `MediaError.Code.invalidFrame` when libyuv refuses the conversion.
    func withPlanarPlanes<R>(scratch: inout [UInt8], _ body: (PlanarPlanes) -> R) throws(MediaError) -> R {
        switch pixelFormat {
        case .i420, .yuv420p10:
            return planes[0].storage.withUnsafeBufferPointer { p0 in
                planes[1].storage.withUnsafeBufferPointer { p1 in
                    planes[2].storage.withUnsafeBufferPointer { p2 in
                        body(PlanarPlanes(y: p0.baseAddress! + planes[0].offset, u: p1.baseAddress! + planes[1].offset,
                                          v: p2.baseAddress! + planes[2].offset, yStride: planes[0].bytesPerRow,
                                          uStride: planes[1].bytesPerRow, vStride: planes[2].bytesPerRow,
                                          bitDepth: pixelFormat.bitDepth))
                    }
                }
            }
        case .nv12, .bgra:
            let luma = width * height
            let needed = luma + luma / 2
            if scratch.count != needed { scratch = [UInt8](repeating: 0, count: needed) }
            let (w, h) = (Int32(width), Int32(height))
            let format = pixelFormat, planes = self.planes
            let status = scratch.withUnsafeMutableBufferPointer { dst -> Int32 in
                let y = dst.baseAddress!
                guard format == .nv12 else {
                    return planes[0].storage.withUnsafeBufferPointer { src in
                        cx264_bgra_to_i420(src.baseAddress! + planes[0].offset, Int32(planes[0].bytesPerRow),
                                           y, w, y + luma, w / 2, y + luma + luma / 4, w / 2, w, h)
                    }
                }
                return planes[0].storage.withUnsafeBufferPointer { py in
                    planes[1].storage.withUnsafeBufferPointer { puv in
                        cx264_nv12_to_i420(py.baseAddress! + planes[0].offset, Int32(planes[0].bytesPerRow),
                                           puv.baseAddress! + planes[1].offset, Int32(planes[1].bytesPerRow),
                                           y, y + luma, y + luma + luma / 4, w, h)
                    }
                }
            }
            guard status == 0 else {
                throw MediaError(.invalidFrame, field: "planes[0]", "libyuv could not convert \(pixelFormat.rawValue) to I420")
            }
            return scratch.withUnsafeBufferPointer { buffer in
                let y = buffer.baseAddress!
                return body(PlanarPlanes(y: y, u: y + luma, v: y + luma + luma / 4, yStride: width,
                                         uStride: width / 2, vStride: width / 2, bitDepth: 8))
            }
        }
    }
}
