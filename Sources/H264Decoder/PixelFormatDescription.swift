internal import CAVCodec

/// A pixel format as libavutil's descriptor (`AVPixFmtDescriptor`) describes it, reduced to what
/// a ``DecodedFrame`` reports: its layout, chroma sampling and bit depth, and plane by plane which
/// components live there, the bytes from one pixel to the next and how far the plane is
/// subsampled. A plane's row byte count is libavutil's own (`av_image_get_linesize`), so the rows
/// of all planes add up to exactly what `av_image_copy_to_buffer` packs
/// (`av_image_get_buffer_size`).
///
/// No format is listed by hand: any planar or semi-planar YUV or grey format with 4:2:0, 4:2:2 or
/// 4:4:4 sampling, any planar G, B, R format and packed B, G, R, A are described, little-endian,
/// at any depth. Everything else (paletted, bitstream, hardware surfaces, Bayer, floating point,
/// big-endian, alpha planes, packed YUV, other subsampling) has no description.
struct PixelFormatDescription: Sendable {
    /// libavutil's `AVPixelFormat` value.
    let format: Int32
    /// How the samples are laid out in planes.
    let layout: DecodedFrame.Layout
    /// The sampling of the second and third components relative to the first.
    let chromaFormat: DecodedFrame.ChromaFormat
    /// Bits per sample of the first component.
    let bitDepth: Int
    /// How many planes the format has (`av_pix_fmt_count_planes`).
    let planeCount: Int
    /// The descriptor's `log2_chroma_w` and `log2_chroma_h`.
    let chromaShift: (width: Int, height: Int)

    /// Describes `format`; nil for a format outside those the type describes. Allocates nothing
    /// (it runs for every decoded frame).
    init?(format: Int32) {
        var info = cav_pix_fmt_info()
        guard cav_pix_fmt_get_info(format, &info) == 0, info.other == 0, info.big_endian == 0,
              (1...4).contains(info.components), (1...4).contains(info.planes) else { return nil }
        let plane = info.plane, offset = info.offset, step = info.step, depth = info.depth
        let shift = (width: Int(info.log2_chroma_w), height: Int(info.log2_chroma_h))
        let sampling: DecodedFrame.ChromaFormat? = switch shift {
        case (0, 0): .yuv444
        case (1, 0): .yuv422
        case (1, 1): .yuv420
        default: nil
        }
        switch (info.rgb != 0, info.planar != 0, info.components) {
        case (true, false, 4):
            // Packed B, G, R, A bytes: components R, G, B, A at byte offsets 2, 1, 0, 3.
            guard info.planes == 1, offset == (2, 1, 0, 3), step == (4, 4, 4, 4), depth == (8, 8, 8, 8) else { return nil }
            layout = .packedBGRA
            chromaFormat = .none
        case (true, true, 3):
            // Planar G, B, R: components R, G, B in planes 2, 0, 1.
            guard info.alpha == 0, (plane.0, plane.1, plane.2) == (2, 0, 1), let sampling else { return nil }
            layout = .planarGBR
            chromaFormat = sampling
        case (false, _, 1):
            guard info.planes == 1 else { return nil }
            layout = .planar
            chromaFormat = .monochrome
        case (false, true, 3):
            guard info.alpha == 0, plane.0 == 0, let sampling else { return nil }
            switch (plane.1, plane.2) {
            case (1, 1):
                // One plane of interleaved Cb, Cr (NV12's order, not NV21's Cr, Cb).
                guard offset.1 < offset.2 else { return nil }
                layout = .semiPlanar
            case (1, 2):
                layout = .planar
            default:
                return nil
            }
            chromaFormat = sampling
        default:
            return nil
        }
        self.format = format
        bitDepth = Int(depth.0)
        planeCount = Int(info.planes)
        chromaShift = shift
    }

    /// Plane `index`'s geometry in a `width` × `height` picture (its stride left at zero), from
    /// the descriptor: the components whose `plane` is `index`, in order of their byte offset;
    /// the largest of their steps; the picture's size shifted by `log2_chroma_w`/`_h` (rounded
    /// up) when the plane holds Cb or Cr. Nil past ``planeCount``. Allocates nothing.
    func plane(_ index: Int, width: Int, height: Int) -> DecodedFrame.Plane? {
        guard (0..<planeCount).contains(index) else { return nil }
        var info = cav_pix_fmt_info()
        guard cav_pix_fmt_get_info(format, &info) == 0 else { return nil }
        // The plane's components in order of byte offset (at most 4: try each offset in turn).
        var components = DecodedFrame.Plane.ComponentList()
        var chroma = false
        var step = 0
        for c in 0..<Int(info.components) where Self.value(info.plane, c) == index {
            step = max(step, Self.value(info.step, c))
            if info.rgb == 0 && (c == 1 || c == 2) { chroma = true }
        }
        for offset in 0..<max(step, 1) {
            for c in 0..<Int(info.components) where Self.value(info.plane, c) == index && Self.value(info.offset, c) == offset {
                components.append(Self.component(c, rgb: info.rgb != 0))
            }
        }
        func shifted(_ size: Int, _ shift: Int) -> Int { chroma ? (size + (1 << shift) - 1) >> shift : size }
        let rowBytes = Int(cav_pix_fmt_row_bytes(format, Int32(clamping: width), Int32(index)))
        return DecodedFrame.Plane(bytesPerRow: 0, rowByteCount: max(rowBytes, 0),
                                  height: shifted(height, chromaShift.height), width: shifted(width, chromaShift.width),
                                  bytesPerPixel: step, componentList: components)
    }

    /// The component the descriptor lists at `index`: Y, Cb, Cr, A, or R, G, B, A for RGB.
    private static func component(_ index: Int, rgb: Bool) -> DecodedFrame.Component {
        switch (index, rgb) {
        case (0, false): .luma
        case (1, false): .cb
        case (2, false): .cr
        case (0, true): .red
        case (1, true): .green
        case (2, true): .blue
        default: .alpha
        }
    }

    /// Value `index` of a C `int[4]`, which Swift imports as a tuple.
    private static func value(_ tuple: (Int32, Int32, Int32, Int32), _ index: Int) -> Int {
        switch index {
        case 0: Int(tuple.0)
        case 1: Int(tuple.1)
        case 2: Int(tuple.2)
        default: Int(tuple.3)
        }
    }
}

extension DecodedFrame {
    /// A frame of FFmpeg's pixel format `name`, `width` × `height`, whose buffers (stride padding
    /// included) hold a byte pattern: each pixel format's geometry, checked without a stream that
    /// codes it. Nil for a format `PixelFormatDescription` does not describe, or when libavutil
    /// cannot allocate the picture.
    init?(patternOf name: String, width: Int, height: Int) {
        let value = cav_pix_fmt_from_name(name)
        guard let format = PixelFormatDescription(format: value) else { return nil }
        let pool = FramePool()
        guard let frame = pool.take() else { return nil }
        guard cav_frame_make_pattern(frame, value, Int32(clamping: width), Int32(clamping: height)) >= 0 else {
            pool.recycle(frame)
            return nil
        }
        var info = cav_frame_info()
        info.width = Int32(clamping: width)
        info.height = Int32(clamping: height)
        info.coded_width = info.width
        info.coded_height = info.height
        info.format = value
        info.sar_den = 1
        self.init(buffer: FrameBuffer(frame: frame, pool: pool), info: info, format: format, formatChanged: false)
    }
}
