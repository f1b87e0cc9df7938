/// How much of the current group of pictures a ``Broadcaster`` keeps so that a viewer who joins
/// starts at once, from the last IDR, instead of waiting for the next one.
///
/// A relay cannot ask its source for an IDR (a camera, a publisher, a file), so without a kept
/// GOP a viewer who joins waits up to a whole GOP (several seconds for many cameras). With one,
/// the broadcaster holds every frame since the last IDR (the frames are shared with the live
/// writes, not copied) and hands a joining viewer those frames back to back, then the live
/// ones; an RTSP viewer's RTP timestamps keep the frames' presentation-time spacing (see
/// ``LiveFrame/presentationTime``), so the player shows them at their pace.
///
/// The memory is bounded: at most ``byteLimit`` bytes (each frame's ``LiveFrame/avcc`` and
/// the forms made of it once for every viewer: its Annex-B bytes and its RTP packets) and ``frameLimit`` frames — never more than the broadcaster's
/// `queueLimit − 1`, so a viewer handed the kept frames is not skipped for them at the next
/// frame. A GOP that grows past either limit is dropped and nothing is kept until the next
/// IDR: a viewer who joins meanwhile waits for that IDR, as without keeping.
public struct GOPKeeping: Sendable, Hashable {
    /// The most bytes kept (the frames' AVCC bytes, and their Annex-B bytes and RTP packets when made).
    public var byteLimit: Int
    /// The most frames kept (the IDR included).
    public var frameLimit: Int

    /// Keeps a GOP of at most `byteLimit` bytes and `frameLimit` frames.
    ///
    /// - Parameters:
    ///   - byteLimit: the most bytes kept.
    ///   - frameLimit: the most frames kept, the IDR included.
    public init(byteLimit: Int, frameLimit: Int) {
        self.byteLimit = byteLimit
        self.frameLimit = frameLimit
    }

    /// 16 MiB and 600 frames: 20 s of a 30 fps camera at up to 6 Mbit/s.
    public static let standard = GOPKeeping(byteLimit: 16 << 20, frameLimit: 600)
}
