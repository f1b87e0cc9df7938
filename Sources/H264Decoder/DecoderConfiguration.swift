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

    /// Decoding threads. With more than one and ``realTime`` false, libavcodec decodes several
    /// frames at once (frame threading): more throughput, one frame of delay per thread.
    public var threads: Threads = .automatic

    /// Real-time decoding: each frame is output as soon as its access unit is decoded (no frame
    /// threading, libavcodec's `AV_CODEC_FLAG_LOW_DELAY`). Streams with frame reordering
    /// (B-frames) still need their reorder delay. VideoToolbox's `kVTDecompressionPropertyKey_RealTime`.
    public var realTime: Bool = false

    /// Creates a configuration: automatic threads, not real time.
    public init(threads: Threads = .automatic, realTime: Bool = false) {
        self.threads = threads
        self.realTime = realTime
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
    /// - Throws: `H264Error.Code.invalidDecoderConfiguration` naming the first invalid property.
    public func validate() throws(H264Error) {
        if case .count(let n) = threads, !(1...64).contains(n) {
            throw H264Error(.invalidDecoderConfiguration, field: "threads", "\(n) threads: use 1…64 or .automatic")
        }
    }
}
