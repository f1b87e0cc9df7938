extension DecodedFrame {
    /// The sampling of the second and third components relative to the first: the H.264
    /// `chroma_format_idc` of the picture as it comes out.
    ///
    /// libavcodec outputs a 4:0:0 H.264 stream (`chroma_format_idc` 0) as 4:2:0 with Cb and Cr
    /// at their middle value, so such frames report ``yuv420``; ``monochrome`` is for a grey
    /// pixel format. A ``Layout/planarGBR`` frame reports ``yuv444``: its B and R planes are as
    /// large as its G plane.
    public enum ChromaFormat: String, Hashable, Sendable {
        /// One component only (`gray`, `gray10le` …).
        case monochrome
        /// 4:2:0: the second and third components at half the width and half the height.
        case yuv420
        /// 4:2:2: the second and third components at half the width, full height.
        case yuv422
        /// 4:4:4: all components at full size (planar YUV 4:4:4 and planar GBR).
        case yuv444
        /// Packed B, G, R, A (``Layout/packedBGRA``): no separate chroma.
        case none
    }

    /// How the samples are laid out in planes: which component each plane holds.
    public enum Layout: String, Hashable, Sendable {
        /// One plane per component: Y, then Cb, then Cr (`yuv420p`, `yuv422p10le`, `yuvj444p` …),
        /// or Y alone (`gray`).
        case planar
        /// One plane per component of an RGB picture, in the order G, B, R (`gbrp`,
        /// `gbrp10le` …): what libavcodec outputs for a 4:4:4 stream whose VUI says
        /// `matrix_coefficients` 0 (RGB, FFmpeg's `color_space=gbr`).
        case planarGBR
        /// Y, then one plane of interleaved Cb, Cr (`nv12`).
        case semiPlanar
        /// One plane of B, G, R, A bytes per pixel (`bgra`).
        case packedBGRA
    }

    /// A colour component, as it lives in a plane.
    public enum Component: String, Hashable, Sendable, CaseIterable {
        /// Y.
        case luma = "Y"
        /// Cb (U).
        case cb = "Cb"
        /// Cr (V).
        case cr = "Cr"
        /// R.
        case red = "R"
        /// G.
        case green = "G"
        /// B.
        case blue = "B"
        /// A (opacity; the converted BGRA output sets it to 255).
        case alpha = "A"

        /// A small number for each case, 0…6 (kept in ``Plane/ComponentList``).
        var code: Int {
            switch self {
            case .luma: 0
            case .cb: 1
            case .cr: 2
            case .red: 3
            case .green: 4
            case .blue: 5
            case .alpha: 6
            }
        }

        /// The component whose ``code`` is `code` (alpha past 5).
        init(code: Int) {
            switch code {
            case 0: self = .luma
            case 1: self = .cb
            case 2: self = .cr
            case 3: self = .red
            case 4: self = .green
            case 5: self = .blue
            default: self = .alpha
            }
        }
    }

    /// One plane's geometry, derived from libavutil's pixel-format descriptor: the rows of all
    /// planes, ``rowByteCount`` bytes each, add up to ``DecodedFrame/packedByteCount``.
    public struct Plane: Hashable, Sendable {
        /// Bytes from one row to the next in the buffer (libavcodec's `linesize`).
        public var bytesPerRow: Int
        /// Bytes of samples in a row, without padding: ``width`` × ``bytesPerPixel``
        /// (libavutil's `av_image_get_linesize`).
        public var rowByteCount: Int
        /// Rows in the plane.
        public var height: Int
        /// Pixels in a row: the frame's width, or its chroma width for a plane of Cb and Cr.
        public var width: Int
        /// Bytes from one pixel to the next in a row: 1 for an 8-bit component, 2 for a wider one
        /// (little-endian), 2 × that for interleaved Cb, Cr, 4 for B, G, R, A.
        public var bytesPerPixel: Int
        /// The components in this plane, in their order within a pixel.
        public var components: [Component] { Array(componentList) }

        /// The components, kept without an allocation.
        var componentList: ComponentList

        init(bytesPerRow: Int, rowByteCount: Int, height: Int, width: Int, bytesPerPixel: Int, componentList: ComponentList) {
            self.bytesPerRow = bytesPerRow
            self.rowByteCount = rowByteCount
            self.height = height
            self.width = width
            self.bytesPerPixel = bytesPerPixel
            self.componentList = componentList
        }

        /// Up to four components packed in an integer, 4 bits each (``Component/code`` + 1),
        /// the first in the lowest bits.
        struct ComponentList: Hashable, Sendable, Sequence, IteratorProtocol {
            private var bits: UInt32 = 0
            private var count = 0

            /// Appends a component (a fifth is ignored).
            mutating func append(_ component: Component) {
                guard count < 4 else { return }
                bits |= UInt32(component.code + 1) << (4 * UInt32(count))
                count += 1
            }

            /// Removes and returns the first component.
            mutating func next() -> Component? {
                guard count > 0 else { return nil }
                let code = Int(bits & 0xF) - 1
                bits >>= 4
                count -= 1
                return Component(code: code)
            }
        }
    }
}
