internal import CAVCodec
import H264

/// A decoded picture — what VideoToolbox hands a decompression output callback as a
/// `CVImageBuffer` with its timing and `VTDecodeInfoFlags`.
///
/// The planes are libavcodec's own reference-counted buffers: a `DecodedFrame` holds one
/// reference, so no pixel is copied between the decoder and the caller, and the buffers go back
/// to libavcodec's pool when the last copy of the frame is released. Read them in place with
/// ``withPlane(_:_:)``, or packed with ``packedBytes()``.
///
/// ## Pixel formats
///
/// With ``DecoderConfiguration/OutputPixelFormat/native`` a frame has the pixel format
/// libavcodec's H.264 decoder chose for the stream (``pixelFormatName`` is FFmpeg's name):
///
/// | Stream | ``layout`` | ``chromaFormat`` | Pixel formats |
/// |---|---|---|---|
/// | 4:2:0, 4:0:0 | ``Layout/planar`` | ``ChromaFormat/yuv420`` | `yuv420p`, `yuvj420p`, `yuv420p9le`, `yuv420p10le`, `yuv420p12le`, `yuv420p14le` |
/// | 4:2:2 | ``Layout/planar`` | ``ChromaFormat/yuv422`` | `yuv422p`, `yuvj422p`, `yuv422p9le`, `yuv422p10le`, `yuv422p12le`, `yuv422p14le` |
/// | 4:4:4 | ``Layout/planar`` | ``ChromaFormat/yuv444`` | `yuv444p`, `yuvj444p`, `yuv444p9le`, `yuv444p10le`, `yuv444p12le`, `yuv444p14le` |
/// | 4:4:4, `matrix_coefficients` 0 | ``Layout/planarGBR`` | ``ChromaFormat/yuv444`` | `gbrp`, `gbrp9le`, `gbrp10le`, `gbrp12le`, `gbrp14le` |
///
/// The `yuvj` formats are 8-bit full range (`video_full_range_flag` 1). A 4:0:0 stream comes out
/// as 4:2:0 with Cb and Cr at their middle value (libavcodec's choice; FFmpeg writes the same).
/// Frames decoded in hardware (``DecoderConfiguration/hardwareAcceleration``) come out in the
/// surface's software format: `nv12` (``Layout/semiPlanar``) for 8-bit 4:2:0. A forced output
/// format (``DecoderConfiguration/outputPixelFormat``) gives `yuv420p`, `nv12` or `bgra`
/// (``Layout/packedBGRA``, ``ChromaFormat/none``). Grey formats (`gray`, `gray10le` …,
/// ``ChromaFormat/monochrome``) are described as well, though libavcodec's H.264 decoder does
/// not output them. A format outside all these makes the session report
/// `MediaError.Code.decoderFailed` rather than hand out a frame it cannot describe.
///
/// Each plane's geometry (``plane(_:)``) comes from libavutil's pixel-format descriptor, so the
/// rows of the planes, ``Plane/rowByteCount`` bytes each, one plane after another, are
/// ``packedBytes()``: FFmpeg's `-f rawvideo` output of the same stream, byte for byte. Samples
/// wider than 8 bits take two bytes, little-endian.
public struct DecodedFrame: Sendable {
    /// The picture's coding type, as libavcodec reports it for the frame.
    public enum PictureType: String, Hashable, Sendable {
        /// Intra-coded.
        case i
        /// Predicted.
        case p
        /// Bi-predicted.
        case b
        /// Switching intra.
        case si
        /// Switching predicted.
        case sp
        /// Not reported.
        case unknown
    }

    /// Per-frame status, VideoToolbox's `VTDecodeInfoFlags` for this decoder.
    public struct Flags: OptionSet, Hashable, Sendable {
        /// The raw bits.
        public let rawValue: Int
        /// Creates flags from raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Damaged: libavcodec concealed errors in this picture (missing or broken slices or
        /// references); it is shown, but is not exactly what the encoder coded.
        public static let damaged = Flags(rawValue: 1 << 0)
        /// The first frame after a change of format (size, pixel format or parameter sets).
        public static let formatChanged = Flags(rawValue: 1 << 1)
    }

    /// The colour description of the stream's VUI (`colour_primaries`, `transfer_characteristics`,
    /// `matrix_coefficients`, `video_full_range_flag`), in the code points of ITU-T H.273 that
    /// H.264 uses (2 = unspecified).
    public struct ColorDescription: Hashable, Sendable {
        /// `colour_primaries` (1 = BT.709).
        public var colourPrimaries: Int
        /// `transfer_characteristics` (1 = BT.709).
        public var transferCharacteristics: Int
        /// `matrix_coefficients` (1 = BT.709, 6 = BT.601).
        public var matrixCoefficients: Int
        /// `video_full_range_flag`: true for 0…255 samples, false for video range.
        public var videoFullRangeFlag: Bool
    }

    let buffer: FrameBuffer
    /// The pixel format, from libavutil's descriptor.
    let format: PixelFormatDescription

    /// The display width in luma samples (the coded width less cropping).
    public let width: Int
    /// The display height in luma samples.
    public let height: Int
    /// The coded width in luma samples (macroblock multiple), before cropping.
    public let codedWidth: Int
    /// The coded height in luma samples, before cropping.
    public let codedHeight: Int
    /// The chroma sampling (``ChromaFormat/yuv444`` for planar GBR, ``ChromaFormat/none`` for
    /// BGRA).
    public var chromaFormat: ChromaFormat { format.chromaFormat }
    /// Bits per sample (8, 9, 10, 12 or 14); samples wider than 8 bits take two bytes,
    /// little-endian.
    public var bitDepth: Int { format.bitDepth }
    /// FFmpeg's name of the pixel format (`yuv420p`, `yuv422p10le`, `gbrp`, `nv12`, `bgra` …).
    public let pixelFormatName: String
    /// How many planes the frame has (1 for grey and BGRA, 2 for NV12, 3 for planar YUV and GBR).
    public var planeCount: Int { format.planeCount }
    /// How the samples are laid out in ``planeCount`` planes.
    public var layout: Layout { format.layout }
    /// When the frame is shown: the time its access unit carried or, for an access unit without
    /// one, the previous frame's time plus its duration (zero for a first frame), so that frames
    /// of an untimed stream are stamped in presentation order.
    public let presentationTimeStamp: Duration
    /// How long the frame is shown (the duration its access unit carried).
    public let duration: Duration
    /// The picture's coding type.
    public let pictureType: PictureType
    /// True for a keyframe (an IDR picture or a recovery point).
    public let isKeyframe: Bool
    /// True when the picture was coded as two fields (or MBAFF).
    public let isInterlaced: Bool
    /// The sample aspect ratio (`sar_width`, `sar_height`); `(0, 1)` when unknown.
    public let sampleAspectRatio: (width: Int, height: Int)
    /// The colour description (`matrixCoefficients` 0 for a ``Layout/planarGBR`` frame).
    public let colorDescription: ColorDescription
    /// Damage and format-change flags.
    public let flags: Flags

    init(buffer: FrameBuffer, info: cav_frame_info, format: PixelFormatDescription, formatChanged: Bool) {
        self.buffer = buffer
        self.format = format
        width = Int(info.width)
        height = Int(info.height)
        codedWidth = Int(info.coded_width)
        codedHeight = Int(info.coded_height)
        pixelFormatName = String(cString: cav_pix_fmt_name(info.format))
        presentationTimeStamp = .microseconds(info.pts)
        duration = .microseconds(info.duration)
        pictureType = switch info.pict_type {
        case 1: .i
        case 2: .p
        case 3: .b
        case 5: .si
        case 6: .sp
        default: .unknown
        }
        isKeyframe = info.key_frame != 0
        isInterlaced = info.interlaced != 0
        sampleAspectRatio = (Int(info.sar_num), Int(max(info.sar_den, 1)))
        colorDescription = ColorDescription(colourPrimaries: Int(info.color_primaries),
                                            transferCharacteristics: Int(info.color_trc),
                                            matrixCoefficients: Int(info.colorspace),
                                            videoFullRangeFlag: info.color_range == 2)
        var flags: Flags = []
        if info.corrupt != 0 || info.decode_error_flags != 0 { flags.insert(.damaged) }
        if formatChanged { flags.insert(.formatChanged) }
        self.flags = flags
    }

    /// The geometry of plane `index`; `nil` past ``planeCount``. Plane 0 holds Y (G for
    /// ``Layout/planarGBR``; B, G, R, A for ``Layout/packedBGRA``); ``Plane/components`` says
    /// what each holds.
    public func plane(_ index: Int) -> Plane? {
        guard var plane = format.plane(index, width: width, height: height) else { return nil }
        var stride: Int32 = 0
        _ = cav_frame_plane(buffer.frame, Int32(index), &stride)
        plane.bytesPerRow = Int(stride)
        return plane
    }

    /// The geometry of every plane, in order.
    public var planes: [Plane] { (0..<planeCount).compactMap { plane($0) } }

    /// The width in samples of planes 1 and 2 (Cb and Cr, or B and R; for ``Layout/semiPlanar``,
    /// Cb, Cr pairs in plane 1); 0 without them.
    public var chromaWidth: Int {
        guard planeCount > 1 else { return 0 }
        let shift = format.chromaShift.width
        return (width + (1 << shift) - 1) >> shift
    }

    /// The height in rows of planes 1 and 2; 0 without them.
    public var chromaHeight: Int {
        guard planeCount > 1 else { return 0 }
        let shift = format.chromaShift.height
        return (height + (1 << shift) - 1) >> shift
    }

    /// Calls `body` with plane `index`'s bytes in place (libavcodec's buffer, no copy) and its
    /// geometry. The bytes span `bytesPerRow × (height − 1) + rowByteCount`; the pointer must
    /// not escape `body`.
    ///
    /// - Returns: `body`'s result, or nil for an index past ``planeCount``.
    public func withPlane<R>(_ index: Int, _ body: (UnsafeRawBufferPointer, Plane) throws -> R) rethrows -> R? {
        guard let plane = plane(index), plane.height > 0 else { return nil }
        var stride: Int32 = 0
        guard let base = cav_frame_plane(buffer.frame, Int32(index), &stride) else { return nil }
        let count = plane.bytesPerRow * (plane.height - 1) + plane.rowByteCount
        return try withExtendedLifetime(buffer) {
            try body(UnsafeRawBufferPointer(start: base, count: count), plane)
        }
    }

    /// The samples packed plane after plane without row padding (the layout of a raw `.yuv`
    /// file and of a y4m frame): one copy.
    public func packedBytes() -> [UInt8] {
        let size = Int(cav_frame_packed_size(buffer.frame))
        guard size > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: size) { storage, count in
            let written = cav_frame_copy_packed(buffer.frame, storage.baseAddress, Int32(size))
            count = written < 0 ? 0 : size
        }
    }

    /// The MD5 of the packed samples as lowercase hexadecimal: the digest FFmpeg's `framemd5`
    /// muxer prints for this frame (libavutil's `av_md5_sum`).
    public func md5() -> String {
        var digest = [UInt8](repeating: 0, count: 16)
        let status = digest.withUnsafeMutableBufferPointer { cav_frame_md5(buffer.frame, $0.baseAddress) }
        guard status >= 0 else { return "" }
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var text = ""
        text.reserveCapacity(32)
        for byte in digest {
            text.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
            text.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 15)]))
        }
        return text
    }

    /// The byte count of ``packedBytes()``.
    public var packedByteCount: Int { max(Int(cav_frame_packed_size(buffer.frame)), 0) }
}

/// Owns one reference to a libavcodec frame; when released, unreferences it
/// (`av_frame_unref`: the picture buffer goes back to libavcodec's pool) and returns the
/// `AVFrame` shell to its decoder's `FramePool` for the next picture.
///
/// `@unchecked Sendable`: the frame is filled by `avcodec_receive_frame` before this object is
/// shared and never written afterwards; libavutil's buffer references are counted atomically,
/// so releasing it from any thread is safe.
final class FrameBuffer: @unchecked Sendable {
    let frame: UnsafeMutablePointer<AVFrame>
    private let pool: FramePool

    init(frame: UnsafeMutablePointer<AVFrame>, pool: FramePool) {
        self.frame = frame
        self.pool = pool
    }

    deinit {
        pool.recycle(frame)
    }
}

/// Empty `AVFrame` shells for a decoder's output, so that receiving a picture allocates no
/// `AVFrame` once as many as are alive at once have been made (a decoder holds a few; a
/// consumer holding many frames gets new ones).
///
/// `@unchecked Sendable`: its shells are `AVFrame` pointers (not `Sendable`, so neither is their
/// `Locked`), reached only under the lock; a shell taken out has one owner, the `DecodedFrame`
/// made around it, until it is recycled.
final class FramePool: @unchecked Sendable {
    /// The shells, each unreferenced (`av_frame_unref`), owned by the pool.
    private let shells: Locked<[UnsafeMutablePointer<AVFrame>]>
    private static let limit = 32

    init() {
        var shells: [UnsafeMutablePointer<AVFrame>] = []
        shells.reserveCapacity(Self.limit)
        self.shells = Locked(shells)
    }

    deinit {
        shells.withLock { shells in
            for shell in shells {
                var pointer: UnsafeMutablePointer<AVFrame>? = shell
                av_frame_free(&pointer)
            }
        }
    }

    /// An empty frame: from the pool, or `av_frame_alloc`; nil when out of memory.
    func take() -> UnsafeMutablePointer<AVFrame>? {
        shells.withLock { $0.popLast() } ?? av_frame_alloc()
    }

    /// Unreferences `frame` and keeps it for reuse (or frees it past the pool's limit).
    func recycle(_ frame: UnsafeMutablePointer<AVFrame>) {
        av_frame_unref(frame)
        let kept = shells.withLock { shells -> Bool in
            guard shells.count < Self.limit else { return false }
            shells.append(frame)
            return true
        }
        if !kept {
            var pointer: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&pointer)
        }
    }
}
