public import H264

/// The properties of a ``DecoderSession`` — what VideoToolbox sets as decompression session
/// properties (`kVTDecompressionPropertyKey_ThreadCount`, `…_RealTime`).
public struct DecoderConfiguration: Hashable, Sendable {
    /// How many threads libavcodec decodes with.
    public enum Threads: Hashable, Sendable {
        /// As many as libavcodec chooses for the machine (its `thread_count = 0`).
        case automatic
        /// Exactly this many (1…64).
        case count(Int)
    }

    /// A hardware decoder to try, through libavcodec's hwaccel (FFmpeg's device type names).
    /// When no device of the type opens, the session decodes in software and says so once in
    /// its log (and in `DecoderSession.hardwareAccelerationInUse`).
    public enum HardwareAcceleration: String, Hashable, Sendable, CaseIterable {
        /// VA-API (Intel, AMD) on Linux.
        case vaapi
        /// NVIDIA CUDA/NVDEC.
        case cuda
        /// Intel Quick Sync Video.
        case qsv
        /// Vulkan video.
        case vulkan
    }

    /// The pixel format of the frames handed out.
    public enum OutputPixelFormat: String, Hashable, Sendable, CaseIterable {
        /// What the stream codes (planar YUV 4:2:0, 4:2:2 or 4:4:4, or planar GBR for an RGB
        /// 4:4:4 stream; 8 to 14 bits; the formats are listed in ``DecodedFrame``): libavcodec's
        /// buffers, no pixel copied.
        case native
        /// 8-bit planar 4:2:0 (`yuv420p`); 8-bit 4:2:0 streams pass through without a copy.
        case i420
        /// 8-bit 4:2:0 with interleaved chroma (`nv12`).
        case nv12
        /// 8-bit B, G, R, A (BT.601 video range to full-range RGB).
        case bgra
    }

    /// The pixel format of the output frames: ``OutputPixelFormat/native`` (the default) or a
    /// forced 8-bit format, converted by libyuv from 8-bit 4:2:0, 4:2:2, 4:4:4 and 10-bit 4:2:0
    /// (other sources make the session report `MediaError.Code.decoderFailed`).
    /// VideoToolbox's `kCVPixelBufferPixelFormatTypeKey` in the destination image buffer attributes.
    public var outputPixelFormat: OutputPixelFormat = .native

    /// Decoding threads. With more than one and ``realTime`` false, libavcodec decodes several
    /// frames at once (frame threading): more throughput, one frame of delay per thread.
    public var threads: Threads = .automatic

    /// Real-time decoding: each frame is output as soon as its access unit is decoded (no frame
    /// threading, libavcodec's `AV_CODEC_FLAG_LOW_DELAY`). Streams with frame reordering
    /// (B-frames) still need their reorder delay. VideoToolbox's `kVTDecompressionPropertyKey_RealTime`.
    public var realTime: Bool = false

    /// The hardware decoder to try; nil (the default) decodes in software. Frames decoded in
    /// hardware are downloaded into system memory, so a ``DecodedFrame`` looks the same either
    /// way. VideoToolbox's `kVTVideoDecoderSpecification_EnableHardwareAcceleratedVideoDecoder`.
    public var hardwareAcceleration: HardwareAcceleration? = nil

    /// How many decoded frames ``DecoderSession/frames`` holds for a consumer that has not read
    /// them, and which it drops beyond that (each drop counted in
    /// ``DecoderSession/droppedFrameCount``); the output handler is not affected. Default
    /// `OutputBufferingPolicy.default` (the newest 30). Read when `frames` is first
    /// accessed. A held frame keeps libavcodec's picture buffers.
    public var frameBuffering: OutputBufferingPolicy = .default

    /// The codec to decode; nil (the default) takes it from what the session is given: the
    /// format description (`FormatDescription` or `hvcC`), else the type of the first access
    /// unit (`AccessUnit` or `HEVCAccessUnit`), else H.264. `AnnexBDecoder` tells it from the
    /// stream's NAL unit headers. VideoToolbox takes it from the format description's
    /// `CMVideoCodecType`.
    public var codec: VideoCodec? = nil

    /// Creates a configuration: automatic threads, not real time, software decoding, native
    /// pixel format, the codec from what the session is given unless `codec` names it.
    public init(threads: Threads = .automatic, realTime: Bool = false, hardwareAcceleration: HardwareAcceleration? = nil,
                outputPixelFormat: OutputPixelFormat = .native, codec: VideoCodec? = nil) {
        self.codec = codec
        self.threads = threads
        self.realTime = realTime
        self.hardwareAcceleration = hardwareAcceleration
        self.outputPixelFormat = outputPixelFormat
    }

    /// libavcodec's `thread_count`.
    var threadCount: Int {
        switch threads {
        case .automatic: 0
        case .count(let n): n
        }
    }

    /// Checks every property.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` naming the first invalid property.
    public func validate() throws(MediaError) {
        if case .count(let n) = threads, !(1...64).contains(n) {
            throw MediaError(.invalidConfiguration, field: "threads", "\(n) threads: use 1…64 or .automatic")
        }
        try frameBuffering.validate()
    }
}
