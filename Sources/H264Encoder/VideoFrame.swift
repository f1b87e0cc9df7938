public import H264

/// One uncompressed picture handed to ``EncoderSession``: its pixel format, size and planes.
///
/// A frame owns (retains) its plane storage: `[UInt8]` arrays are reference-counted and
/// copy-on-write, so building a frame, queueing it and handing its planes to x264 never
/// copies pixels (x264 reads them straight from this storage). Several planes may share one
/// array at different offsets — a contiguous I420 buffer needs no splitting.
public struct VideoFrame: Sendable {
    /// How pixels are laid out.
    public enum PixelFormat: String, Hashable, Sendable, CaseIterable {
        /// 8-bit 4:2:0 planar: Y, then Cb (U), then Cr (V) planes.
        case i420
        /// 8-bit 4:2:0 semi-planar: Y plane, then one plane of interleaved Cb, Cr pairs.
        case nv12
        /// 8-bit packed B, G, R, A (32 bits per pixel); converted to I420 with libyuv
        /// (BT.601 limited range, as WebRTC does).
        case bgra
        /// 10-bit 4:2:0 planar (FFmpeg's `yuv420p10le`, y4m's `C420p10`): Y, Cb, Cr planes, each
        /// sample in 16 bits little-endian with values 0…1023; rows and strides count bytes.
        /// Encoded by H.265 (Main 10 keeps the 10 bits; Main rounds them to 8).
        case yuv420p10

        /// The number of planes of this format.
        public var planeCount: Int {
            switch self {
            case .i420, .yuv420p10: 3
            case .nv12: 2
            case .bgra: 1
            }
        }

        /// Bits per sample: 10 for ``yuv420p10``, 8 for the others.
        public var bitDepth: Int { self == .yuv420p10 ? 10 : 8 }
    }

    /// One plane: where its first row starts in `storage` and the distance between rows.
    public struct Plane: Sendable {
        /// The bytes holding the plane (possibly with other planes).
        public var storage: [UInt8]
        /// The index in `storage` of the plane's first byte.
        public var offset: Int
        /// The distance in bytes from one row to the next (the stride), at least a row's bytes.
        public var bytesPerRow: Int

        /// Creates a plane of `storage` starting at `offset` with rows `bytesPerRow` apart.
        public init(storage: [UInt8], offset: Int = 0, bytesPerRow: Int) {
            self.storage = storage
            self.offset = offset
            self.bytesPerRow = bytesPerRow
        }
    }

    /// The pixel format.
    public let pixelFormat: PixelFormat
    /// The width in pixels.
    public let width: Int
    /// The height in pixels.
    public let height: Int
    /// The planes, in the format's order (I420: Y, U, V; NV12: Y, UV; BGRA: one).
    public let planes: [Plane]

    /// Creates a frame after checking that the planes hold `width` × `height` pixels.
    ///
    /// - Throws: `MediaError.Code.invalidFrame` for a zero, negative or (for the 4:2:0
    ///   formats, including BGRA which is converted to 4:2:0) odd size, the wrong number of
    ///   planes, a stride shorter than a row, or a plane whose last row runs past its storage.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, planes: [Plane]) throws(MediaError) {
        guard width > 0, height > 0 else {
            throw MediaError(.invalidFrame, field: "size", "\(width)×\(height): width and height must be at least 1")
        }
        guard width <= 16_384, height <= 16_384 else {
            throw MediaError(.invalidFrame, field: "size", "\(width)×\(height) exceeds 16384×16384")
        }
        guard width % 2 == 0, height % 2 == 0 else {
            throw MediaError(.invalidFrame, field: "size", "\(width)×\(height): 4:2:0 needs an even width and height")
        }
        guard planes.count == pixelFormat.planeCount else {
            throw MediaError(.invalidFrame, field: "planes", "\(pixelFormat.rawValue) needs \(pixelFormat.planeCount) planes, got \(planes.count)")
        }
        for (index, plane) in planes.enumerated() {
            let (rowBytes, rows) = Self.geometry(pixelFormat, plane: index, width: width, height: height)
            let name = "planes[\(index)]"
            guard plane.offset >= 0 else {
                throw MediaError(.invalidFrame, field: name, "negative offset \(plane.offset)")
            }
            guard plane.bytesPerRow >= rowBytes else {
                throw MediaError(.invalidFrame, field: name, "stride \(plane.bytesPerRow) is shorter than a row of \(rowBytes) bytes")
            }
            // offset + stride × (rows − 1) + rowBytes, overflow-checked.
            let (a, o1) = plane.bytesPerRow.multipliedReportingOverflow(by: rows - 1)
            let (b, o2) = a.addingReportingOverflow(rowBytes)
            let (needed, o3) = b.addingReportingOverflow(plane.offset)
            guard !o1, !o2, !o3, needed <= plane.storage.count else {
                throw MediaError(.invalidFrame, field: name,
                                "\(rows) rows of \(rowBytes) bytes with stride \(plane.bytesPerRow) from offset \(plane.offset) need \(o1 || o2 || o3 ? "too many" : String(needed)) bytes, storage has \(plane.storage.count)")
            }
        }
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.planes = planes
    }

    /// Creates a frame from one tightly packed buffer: I420 (Y, U, V, `width × height × 3 / 2`
    /// bytes), NV12 (Y, UV, same size), BGRA (`width × height × 4` bytes) or 10-bit 4:2:0
    /// (Y, U, V, `width × height × 3` bytes). No copy is made.
    ///
    /// - Throws: `MediaError.Code.invalidFrame` as ``init(pixelFormat:width:height:planes:)``.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, contiguous bytes: [UInt8]) throws(MediaError) {
        guard width > 0, height > 0, width <= 16_384, height <= 16_384 else {
            throw MediaError(.invalidFrame, field: "size", "\(width)×\(height) is outside 1…16384")
        }
        let luma = width * height
        let planes: [Plane]
        switch pixelFormat {
        case .i420:
            planes = [Plane(storage: bytes, offset: 0, bytesPerRow: width),
                      Plane(storage: bytes, offset: luma, bytesPerRow: width / 2),
                      Plane(storage: bytes, offset: luma + luma / 4, bytesPerRow: width / 2)]
        case .nv12:
            planes = [Plane(storage: bytes, offset: 0, bytesPerRow: width),
                      Plane(storage: bytes, offset: luma, bytesPerRow: width)]
        case .bgra:
            planes = [Plane(storage: bytes, offset: 0, bytesPerRow: width * 4)]
        case .yuv420p10:
            planes = [Plane(storage: bytes, offset: 0, bytesPerRow: width * 2),
                      Plane(storage: bytes, offset: luma * 2, bytesPerRow: width),
                      Plane(storage: bytes, offset: luma * 2 + luma / 2, bytesPerRow: width)]
        }
        try self.init(pixelFormat: pixelFormat, width: width, height: height, planes: planes)
    }

    /// Bytes per row and rows of plane `index` for a frame of `width` × `height`.
    static func geometry(_ format: PixelFormat, plane index: Int, width: Int, height: Int) -> (rowBytes: Int, rows: Int) {
        switch (format, index) {
        case (.i420, 0), (.nv12, 0): (width, height)
        case (.i420, _): (width / 2, height / 2)
        case (.nv12, _): (width, height / 2)
        case (.bgra, _): (width * 4, height)
        case (.yuv420p10, 0): (width * 2, height)
        case (.yuv420p10, _): (width, height / 2)
        }
    }
}
