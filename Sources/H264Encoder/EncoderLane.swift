import H264
import HEVC
import Logging

/// One encoder (x264 or x265, by the configuration's codec) for one size, opened lazily and
/// guarded by a mutex (neither library gives thread-safety for a handle). Used by the encoding
/// queue, and by `prepare`/`prewarm` on the caller's thread before any frame reaches it.
///
/// `@unchecked Sendable`: its `CodecEncoder` is not `Sendable` (a library handle has no
/// thread-safety), so neither is the `Locked` around it; it is reached only inside that lock,
/// and everything else here is `Sendable`.
final class Lane: @unchecked Sendable {
    let width: Int
    let height: Int
    private let configuration: Locked<EncoderConfiguration>
    private let logger: Logger
    /// The encoder, used only inside this lock (opened again after a flush).
    private let encoder = Locked<(any CodecEncoder)?>(nil)
    private let cachedFormat = Locked<VideoFormatDescription?>(nil)

    init(width: Int, height: Int, configuration: EncoderConfiguration, logger: Logger) {
        self.width = width
        self.height = height
        self.configuration = Locked(configuration)
        self.logger = logger
    }

    var openFormat: VideoFormatDescription? { cachedFormat.withLock { $0 } }

    private func withEncoder<R>(_ body: (any CodecEncoder) throws(MediaError) -> R) throws(MediaError) -> R {
        try encoder.withLock { (slot) throws(MediaError) -> R in
            if slot == nil {
                let opened = try openCodecEncoder(width: width, height: height,
                                                  configuration: configuration.withLock { $0 }, logger: logger)
                cachedFormat.withLock { $0 = opened.format }
                slot = opened
            }
            return try body(slot!)
        }
    }

    /// Opens the encoder if needed; returns its format.
    func open() throws(MediaError) -> VideoFormatDescription {
        try withEncoder { $0.format }
    }

    func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws(MediaError) -> EncodedFrame? {
        try withEncoder { (e) throws(MediaError) in
            try e.encode(frame, presentationTimeStamp: presentationTimeStamp, duration: duration, forceKeyframe: forceKeyframe)
        }
    }

    /// Drains the encoder and closes it; a later frame reopens a fresh encoder.
    func flush() throws(MediaError) -> [EncodedFrame] {
        try encoder.withLock { (slot) throws(MediaError) -> [EncodedFrame] in
            guard let open = slot else { return [] }
            slot = nil
            return try open.flushAndClose()
        }
    }

    func reconfigure(_ c: EncoderConfiguration) throws(MediaError) {
        configuration.withLock { $0 = c }
        try encoder.withLock { (slot) throws(MediaError) in
            try slot?.reconfigure(c)
        }
    }

    /// Closes the encoder (idempotent). The session calls it only for a lane it no longer uses (retired,
    /// replaced or invalidated): the queue's frame jobs read the session's invalidated flag
    /// before they reach a lane, so none opens a closed lane again.
    func close() {
        encoder.withLock { slot in
            slot?.close()
            slot = nil
        }
    }
}
