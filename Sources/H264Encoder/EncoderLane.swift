import H264
import Logging

/// One x264 encoder for one size, opened lazily and guarded by a mutex (x264 gives no
/// thread-safety for a handle). Used by the encoding queue, and by `prepare`/`prewarm` on the
/// caller's thread before any frame reaches it.
///
/// `@unchecked Sendable`: its `X264Encoder` is not `Sendable` (an x264 handle has no
/// thread-safety), so neither is the `Locked` around it; it is reached only inside that lock,
/// and everything else here is `Sendable`.
final class Lane: @unchecked Sendable {
    let width: Int
    let height: Int
    private let configuration: Locked<EncoderConfiguration>
    private let logger: Logger
    /// The x264 encoder, used only inside this lock (opened again after a flush).
    private let encoder = Locked<X264Encoder?>(nil)
    private let cachedFormat = Locked<FormatDescription?>(nil)

    init(width: Int, height: Int, configuration: EncoderConfiguration, logger: Logger) {
        self.width = width
        self.height = height
        self.configuration = Locked(configuration)
        self.logger = logger
    }

    var openFormatDescription: FormatDescription? { cachedFormat.withLock { $0 } }

    private func withEncoder<R>(_ body: (X264Encoder) throws(H264Error) -> R) throws(H264Error) -> R {
        try encoder.withLock { (slot) throws(H264Error) -> R in
            if slot == nil {
                let opened = try X264Encoder(width: width, height: height,
                                             configuration: configuration.withLock { $0 }, logger: logger)
                cachedFormat.withLock { $0 = opened.formatDescription }
                slot = opened
            }
            return try body(slot!)
        }
    }

    /// Opens x264 if needed; returns the format description.
    func open() throws(H264Error) -> FormatDescription {
        try withEncoder { $0.formatDescription }
    }

    func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws(H264Error) -> EncodedFrame? {
        try withEncoder { (e) throws(H264Error) in
            try e.encode(frame, presentationTimeStamp: presentationTimeStamp, duration: duration, forceKeyframe: forceKeyframe)
        }
    }

    /// Drains x264 and closes it; a later frame reopens a fresh encoder.
    func flush() throws(H264Error) -> [EncodedFrame] {
        try encoder.withLock { (slot) throws(H264Error) -> [EncodedFrame] in
            guard let open = slot else { return [] }
            slot = nil
            return try open.flushAndClose()
        }
    }

    func reconfigure(_ c: EncoderConfiguration) throws(H264Error) {
        configuration.withLock { $0 = c }
        try encoder.withLock { (slot) throws(H264Error) in
            try slot?.reconfigure(c)
        }
    }

    /// Closes x264 (idempotent). The session calls it only for a lane it no longer uses (retired,
    /// replaced or invalidated): the queue's frame jobs read the session's invalidated flag
    /// before they reach a lane, so none opens a closed lane again.
    func close() {
        encoder.withLock { slot in
            slot?.close()
            slot = nil
        }
    }
}
